"""GitHub's webhook signature: X-Hub-Signature-256 is "sha256=" + the hex HMAC-SHA256 of the raw body."""

from __future__ import annotations

import hashlib
import hmac

PREFIX = "sha256="


def signature_of(secret: str, body: bytes) -> str:
    return PREFIX + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def is_signed_by(secret: str, body: bytes, header: str | None) -> bool:
    """True only for the body's own signature under `secret`; compared in constant time."""
    if not secret or not header or not header.startswith(PREFIX):
        return False
    return hmac.compare_digest(signature_of(secret, body).encode("ascii"), header.strip().encode("utf-8"))
