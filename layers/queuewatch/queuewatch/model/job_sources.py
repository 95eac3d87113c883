"""The job sources' rhythm, pure: when each source (the autoscaler's bus, GitHub's webhook) last delivered a
job event, its longest gaps between events, and whether it has gone quiet for longer than its own normal.

The track stage keeps one small item per source in the jobs table (adapters/jobs_table/heartbeats.py): its latest event
and, per UTC day, the longest gap it saw. The collector reads them in one call a tick and puts them in the
snapshot; the evaluator pages the monitor (`source:<name>`) for a source quiet past both its normal and
`monitor.job_source_quiet_after`.

An outage must not become the normal (`normal_gap`): taken day by day, oldest first, a day's longest gap that
was longer than the normal learned so far and the floor is an outage, the quiet the monitor paged for, and
is left out. A quiet that recurs is the source's rhythm (a night, a weekend): once two days hold such gaps, the
shorter of the two longest is learned. So one 8h outage leaves the normal as it was, and a 6h outage two days
later pages; a quiet night pages on its first two nights, then is normal.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Annotated, Literal

from pydantic import AfterValidator, AwareDatetime, Field

from queuewatch.base.durations import format_duration
from queuewatch.base.frozen import FrozenModel

SOURCES = ("bus", "webhook")
Source = Literal["bus", "webhook"]
SOURCE_PREFIX = "source#"  # the heartbeat item's key in the jobs table: `source#bus`, `source#webhook`
GAP_PREFIX = "gap#"  # its attribute per UTC day: `gap#2026-11-25`, the longest gap that day, in seconds
NORMAL_DAYS = 7  # the gaps that define a source's normal: a week, so a weekend or a quiet night is normal
BEAT_EVERY = timedelta(minutes=1)  # a container writes its source's heartbeat at most this often
MATCHER_ERROR_LENGTH = 300  # a matcher config's read failure, as the heartbeat carries it: the parameter and why
MATCHER_SOURCE = "matcher-config"  # the monitor's `source:matcher-config`: the autoscaler's routing unread

FIXES: dict[str, str] = {
    "bus": "the autoscaler's EventBridge rule for workflow_job is disabled or its target is not TrackFunction "
    "(check the rule and TrackFunction's Errors, Throttles and dead-letter queue), or the autoscaler's webhook "
    "stopped publishing (check its log group)",
    "webhook": "GitHub stopped delivering or the webhook refuses the deliveries: check the hook's Recent "
    "Deliveries (a 401 is a secret that differs from WebhookSecretArn's, a 400 the form content type: set "
    "application/json), that the hook is active and covers the repositories, and WebhookDeliveriesFunction's "
    "Errors and its dead-letter queue",
}


class JobSourceBeat(FrozenModel):
    """One source's heartbeat as the collector read it."""

    source: Source
    last_event_at: Annotated[AwareDatetime, AfterValidator(lambda moment: moment.astimezone(UTC))]
    longest_gap_seconds: Annotated[float, Field(ge=0)] = 0  # its normal over the last NORMAL_DAYS days
    outage_gap_seconds: Annotated[float, Field(ge=0)] = 0  # the longest gap left out of it as an outage
    # The autoscaler's matcher config, expected and unread by the container that wrote the heartbeat: why.
    matcher_error: Annotated[str, Field(max_length=MATCHER_ERROR_LENGTH)] | None = None


def normal_gap(daily: Mapping[str, float], floor: float) -> tuple[float, float]:
    """The source's normal gap from each day's longest (by UTC day, `YYYY-MM-DD`), and the longest gap left out
    of it as an outage (0: none)."""
    ordinary: list[float] = []
    outages: list[float] = []

    def learned() -> float:
        return max([*ordinary, *sorted(outages)[-2:-1]], default=0)  # an outage's quiet counts once it recurs

    for day in sorted(daily):
        gap = daily[day]
        (outages if gap > max(learned(), floor) else ordinary).append(gap)
    normal = learned()
    return normal, max((gap for gap in outages if gap > normal), default=0)


def matcher_text(error: str) -> str:
    """The degraded routing, said once: what it costs and what to check."""
    return (
        f"the autoscaler's matcher config could not be read ({error}): jobs its label sets do not route "
        "are stored with no runner type, so their queue time counts for none. Check the parameter exists "
        "(terraform output of the webhook module), and TrackRole may ssm:GetParameters it (AutoscalerPrefix, "
        "AutoscalerMatcherConfigPath)"
    )


def gap_days(now: datetime) -> list[str]:
    """The UTC days whose longest gaps define the normal, newest first."""
    return [(now - timedelta(days=n)).strftime("%Y-%m-%d") for n in range(NORMAL_DAYS)]


def quiet_for(beat: JobSourceBeat, now: datetime, floor: int) -> float | None:
    """How long the source has been quiet, when that is longer than both its normal and `floor`; else None."""
    quiet = (now - beat.last_event_at).total_seconds()
    return quiet if quiet > max(beat.longest_gap_seconds, floor) else None


def quiet_text(beat: JobSourceBeat, quiet: float) -> str:
    normal = (
        f"longer than its longest gap in {NORMAL_DAYS} days ({format_duration(beat.longest_gap_seconds)})"
        if beat.longest_gap_seconds
        else f"and no gap recorded in {NORMAL_DAYS} days"
    )
    outage = (
        f" (its {format_duration(beat.outage_gap_seconds)} gap in that time was an outage, not its normal)"
        if beat.outage_gap_seconds
        else ""
    )
    return f"no {beat.source} job event for {format_duration(quiet)}, {normal}{outage}. Likely: {FIXES[beat.source]}"
