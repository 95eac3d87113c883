"""Each region's queue listing, and each queue a listing found that nothing watches (pure)."""

from __future__ import annotations

from queuewatch.alerting.alert_state import InstanceKey
from queuewatch.evaluate.steps import Plan, step_instance
from queuewatch.model.rules import HEALTH_RULE, Verdict
from queuewatch.model.snapshot import Snapshot

DISCOVERY = "discovery"  # health instances "discovery:<region>" stand for each region's queue listing
UNWATCHED = "unwatched"  # and "unwatched:<region>:<queue>" for a queue a listing found and nothing watches


def step_discovery(result: Plan, snapshot: Snapshot) -> set[InstanceKey]:
    """A failed queue listing hides the runner types it would find: report the region as degraded. A queue a
    listing found and nothing watches is degraded under its own name, `unwatched:<region>:<queue>`."""
    errors: dict[str, list[str]] = {}
    seen: set[InstanceKey] = set()
    for listing in snapshot.discovery:
        failed = errors.setdefault(listing.region, [])  # every listed region steps, failed or not
        if listing.error:
            failed.append(f"{listing.pattern}: {listing.error}")
        unwatched = listing.unwatched
        if listing.skipped > len(listing.skipped_queues) and len(unwatched) == len(listing.skipped_queues):
            unlisted = listing.skipped - len(listing.skipped_queues)
            failed.append(f"{listing.pattern}: {unlisted} more queues skipped, not listed in the snapshot")
        for queue in unwatched:
            name = f"{UNWATCHED}:{listing.region}:{queue.queue}"
            result.verdicts[InstanceKey(HEALTH_RULE, name)] = Verdict(
                breached=True, breached_signals=("no_data",), missing={"discovery": queue.reason}
            )
            result.degraded.add(name)
            seen.add(step_instance(result, result.context.health, name, True))
    for region, failed in sorted(errors.items()):
        name = f"{DISCOVERY}:{region}"
        result.verdicts[InstanceKey(HEALTH_RULE, name)] = Verdict(
            breached=bool(failed),
            breached_signals=("no_data",) if failed else (),  # the listing, not a signal: no data
            missing={"discovery": "; ".join(failed)} if failed else {},
        )
        if failed:
            result.degraded.add(name)
        seen.add(step_instance(result, result.context.health, name, bool(failed)))
    return seen


def health_place(name: str) -> tuple[str, str] | None:
    """The region and queue a listing's health instance stands for (`discovery:<region>`: no queue)."""
    kind, _, rest = name.partition(":")
    if kind == UNWATCHED:
        region, _, queue = rest.partition(":")
        return region, queue
    return (rest, "") if kind == DISCOVERY else None
