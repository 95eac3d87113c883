"""GitHub's webhook signature: X-Hub-Signature-256 is "sha256=" and the HMAC-SHA256 of the raw body
under the webhook's secret. Checked before anything else reads the body."""

from __future__ import annotations

import hashlib
import hmac

PREFIX = "sha256="


def signature_valid(secret: str, body: bytes, header: str | None) -> bool:
    """True only for a well-formed header whose digest matches, compared in constant time. The header is
    anyone's text: it is compared as UTF-8 bytes, since compare_digest refuses a str that is not ASCII."""
    if not header or not header.startswith(PREFIX) or not secret:
        return False
    expected = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest().encode()
    return hmac.compare_digest(expected, header[len(PREFIX) :].encode("utf-8", errors="replace"))


def sign(secret: str, body: bytes) -> str:
    """The header GitHub would send for this body: for tests and the local runner."""
    return PREFIX + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
