"""What no rule judges at run time: the runner types discovery found that no rule selects, and the rule globs
that nearly select a watched runner type but select none (`*-nvida-gpu-*`). check-config says this of the
runner types the config names; discovered names are known only here. Pure: the config and the snapshot.
"""

from __future__ import annotations

import fnmatch

from queuewatch.base.wording import plural
from queuewatch.config.coverage import near_miss
from queuewatch.config.schema import Config
from queuewatch.model.snapshot import Snapshot

MAX_NAMED = 10  # the finding names this many runner types; the count says the rest


def unjudged_text(config: Config, snapshot: Snapshot) -> str | None:
    """The finding in words, or None when every watched runner type has a rule and every glob selects one."""
    names = [runner_type.name for runner_type in snapshot.runner_types]
    unselected = [name for name in names if not config.rules_for(name)]
    parts = []
    if unselected:
        listed = ", ".join(unselected[:MAX_NAMED]) + (
            f" and {len(unselected) - MAX_NAMED} more" if len(unselected) > MAX_NAMED else ""
        )
        parts.append(f"{plural(len(unselected), 'runner type')} no rule selects: {listed}")
    for rule in config.rules:
        for pattern in rule.match:
            if any(fnmatch.fnmatchcase(name, pattern) for name in names):
                continue
            hint = near_miss(pattern, names)
            if hint:  # a glob meant for another stack's runner types is not a mistake; a near miss is
                parts.append(f"rule {rule.name!r}: {pattern!r} selects no watched runner type{hint}")
    return "; ".join(parts) or None
