"""SNS subjects: ASCII, one line, under 100 characters, whatever the config's names hold.

SNS refuses a Publish whose Subject is not ASCII text beginning with a letter, number or punctuation
mark, holds a line break or control character, or is 100 characters or longer; the page would then
fail on every tick. Team and rule names come from people ("Plateforme CI \u2013 Zürich"), so every subject
passes through `sns_subject`, which spells such names in ASCII rather than dropping them.
"""

from __future__ import annotations

import unicodedata

SUBJECT_LIMIT = 100  # SNS takes a subject "less than 100 characters long"

# Letters and signs that Unicode does not decompose into an ASCII letter and a mark.
_SPELLED = str.maketrans(
    {
        "ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O", "ł": "l",
        "Ł": "L", "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "Th", "ı": "i", "ĸ": "k",
        "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-",
        "‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"', "«": '"', "»": '"',
        "‹": "'", "›": "'", "…": "...", "•": "*", "·": ".", "×": "x", "÷": "/", "€": "EUR", "£": "GBP",
        "¥": "JPY", "©": "(c)", "®": "(R)", "™": "TM", "°": " deg", "µ": "u",
    }
)  # fmt: skip


def ascii_text(text: str) -> str:
    """`text` in ASCII on one line: accents dropped ("Zürich" -> "Zurich"), dashes and quotes as their ASCII
    kin, any other character that has no ASCII spelling as '?', control characters and line breaks as spaces."""
    spelled = unicodedata.normalize("NFKD", text.translate(_SPELLED)).translate(_SPELLED)
    out = []
    for char in spelled:
        if unicodedata.combining(char):
            continue
        if char.isascii():
            out.append(" " if not char.isprintable() else char)
        elif unicodedata.category(char).startswith(("Z", "C")):  # other spaces, controls, separators
            out.append(" ")
        else:
            out.append("?")
    return " ".join("".join(out).split())


def sns_subject(text: str) -> str:
    """A subject SNS takes: ASCII, one line, opening with no space, under SUBJECT_LIMIT; cut between words
    with '...' when too long."""
    subject = ascii_text(text) or "queuewatch"
    if len(subject) < SUBJECT_LIMIT:
        return subject
    room = SUBJECT_LIMIT - 1 - len("...")
    head = subject[: room + 1]
    cut = head.rsplit(" ", 1)[0] if " " in head else head[:room]
    return f"{cut[:room].rstrip(' ,;:(')}..."
