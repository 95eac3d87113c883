"""The state table's item keys, every kind's written here once. The table is keyed `pk` (S) and `sk` (S):

- the evaluator's partition, `pk = queuewatch`, read with one Query a tick (alerts.py): `sk` is `cursor`
  (the last tick applied), `instance#<instance key>`, `group#<group key>`, `silence#<id>`, or `known` (the
  digest of the names last published);
- the names published for the commands (known_names.py): `pk = known`, `sk = config`, outside that partition;
- the sent log (sent_log.py): `pk = sent#<UTC day>`, one partition a day;
- the transition log (transition_log.py): `pk = transition#<rule>#<runner type>`;
- the forecast board (forecast_board.py): `pk = forecast`, `sk = board`, outside the evaluator's partition.
"""

from __future__ import annotations

PARTITION = "queuewatch"  # the evaluator's partition
CURSOR = "cursor"
INSTANCE, GROUP, SILENCE, KNOWN = "instance", "group", "silence", "known"  # the kinds of its sort keys
KNOWN_NAMES_KEY = {"pk": {"S": KNOWN}, "sk": {"S": "config"}}
SENT_PREFIX = "sent#"
TRANSITION_PREFIX = "transition#"
FORECAST_BOARD_KEY = {"pk": {"S": "forecast"}, "sk": {"S": "board"}}


def sort_key(kind: str, key: str) -> str:
    """An item's sort key in the evaluator's partition: its kind, then its own key."""
    return f"{kind}#{key}"
