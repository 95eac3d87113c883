"""The Snapshot: what the collector saw on one tick, and what the evaluator judges.

It travels as the collector's return value inside a Lambda destination record
(wire.py), so it is kept compact: a reading omits what it does not have.
A failed collection reaches the evaluator as a CollectorFailure instead; either
is one observation, stamped with the tick it stands for.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Literal

from pydantic import AfterValidator, AwareDatetime, Field, field_validator

from queuewatch.base.errors import QueuewatchError
from queuewatch.base.frozen import FrozenModel
from queuewatch.model.autoscaler_log import AutoscalerLog
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.job_sources import SOURCES, JobSourceBeat
from queuewatch.model.signals import RULE_SIGNALS, SignalName

SNAPSHOT_VERSION: Literal[1] = 1

RUNNER_TYPE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
"""A runner type's name, as the config names it and as discovery reads it from a queue name: its key."""
QUALIFIER = "@"
RUNNER_TYPE_IDENTITY = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(@[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-\d(\.\d{12})?)?$"
)
"""A watched queue's identity in a snapshot, state keys, metrics and silences: its runner type key, and for a
key watched in more than one place, `@<region>` (`@<region>.<account>` outside the stack's default account)
on every copy but one (collect/queues.py). At most 128 + 40 characters: well inside a state key's 1,024 bytes
and a metric dimension value's 1,024 characters."""
MAX_NAME_LENGTH = 256  # teams, regions, queues, ids: each is part of a key, a page or a metric dimension

# How far an observation's time may stand from the evaluator's wall clock. Ahead: clocks skew by
# seconds (Lambda's are NTP-synced; the schedule stamps the tick), so 5 minutes is generous and a later
# time can only be a hand-edited event or a wrong replay. Behind: a real tick reaches the evaluator
# within the collector's maximum event age and timeout (120 s + 45 s) and the evaluator's own
# (300 s, retries included, + 45 s), about 8.5 minutes; 15 leaves room. Anything older is a replay.
MAX_AHEAD = timedelta(minutes=5)
MAX_BEHIND = timedelta(minutes=15)


class ImplausibleObservation(QueuewatchError):
    """An observation whose time is too far from the evaluator's clock to be a real tick: it is refused."""


def _utc(value: datetime) -> datetime:
    return value.astimezone(UTC)  # one representation per instant, so times compare and store alike


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError(f"found {value}, expected a finite number")
    return value


def _runner_type_name(value: str) -> str:
    if not RUNNER_TYPE_IDENTITY.match(value):
        shown = value if len(value) <= 60 else value[:60] + f"... ({len(value)} characters)"
        raise ValueError(
            f"found {shown!r}, expected a runner type name: a letter or digit, then up to 127 of A-Z a-z 0-9 . _ -, "
            "and for a key watched in several places '@<region>' or '@<region>.<account>'"
        )
    return value


def runner_type_key(identity: str) -> str:
    """The runner type key an identity stands for: `linux-x64@eu-west-1` -> `linux-x64`."""
    return identity.split(QUALIFIER, 1)[0]


def qualified(key: str, region: str, account_id: str | None = None) -> str:
    """The identity of a key's copy watched in `region` (and `account_id`, outside the default account)."""
    return f"{key}{QUALIFIER}{region}" + (f".{account_id}" if account_id else "")


Finite = Annotated[float, AfterValidator(_finite)]
UtcDatetime = Annotated[AwareDatetime, AfterValidator(_utc)]
Name = Annotated[str, Field(min_length=1, max_length=MAX_NAME_LENGTH)]


class Reading(FrozenModel):
    """One signal's latest value, or why there is none, and the history the triage compares it with.

    The history comes from the same GetMetricData call as the value: count signals
    carry their sum over the triage window and their usual sum per window before
    it; level signals carry where they stood when the window began.
    """

    value: Finite | None = None
    age_seconds: Finite | None = None  # how old the value was when collected
    error: str | None = None  # set exactly when value is None
    window_sum: Finite | None = None  # count signals: the total over the triage window
    baseline_sum: Finite | None = None  # count signals: the usual total per window, over the baseline before it
    window_first: Finite | None = None  # level signals: the first datapoint of the triage window
    window_last: Finite | None = None  # level signals: the last datapoint of the triage window
    baseline_mean: Finite | None = None  # level signals: the mean over the baseline before the window
    by_name: dict[str, Finite] | None = None  # ec2_exceptions: the window's total per exception name, non-zero only
    fleet_wide: bool | None = None  # set when the metric names no runner type: it counts the whole fleet

    @classmethod
    def of(cls, value: float, age_seconds: float = 0.0) -> Reading:
        return cls(value=value, age_seconds=round(age_seconds, 1))

    @classmethod
    def missing(cls, reason: str) -> Reading:
        return cls(error=reason)


class WaitingJob(FrozenModel):
    """One tracked job still queued: where it waits, and since when."""

    repo: Annotated[str, Field(max_length=MAX_NAME_LENGTH)]
    url: Annotated[str, Field(max_length=2 * MAX_NAME_LENGTH)] | None = None
    created_at: UtcDatetime
    run_id: Annotated[int, Field(ge=0)] | None = None  # the workflow run, where the page names it


class UnmatchedJobs(FrozenModel):
    """Queued jobs whose labels no watched runner type serves: a finding of its own."""

    label_set: Annotated[str, Field(max_length=2 * MAX_NAME_LENGTH)]
    count: Annotated[int, Field(ge=1)]
    oldest_seconds: Annotated[float, Field(ge=0)]


class RunnerTypeSnapshot(FrozenModel):
    # Empty defaults are values, never default_factory: pydantic copies an empty value cheaply, but inspects a
    # factory's signature on every model_construct, 20 times the cost on the backtest's tick-by-tick rebuild.
    name: Annotated[str, AfterValidator(_runner_type_name)]
    region: Name
    queue_name: Annotated[str, Field(max_length=MAX_NAME_LENGTH)]
    account_id: Annotated[str, Field(pattern=r"^\d{12}$")] | None = None  # set for a queue in another account
    team: Name | None = None
    signals: dict[SignalName, Reading] = Field(default={})
    oldest_jobs: list[WaitingJob] = Field(default=[], max_length=5)
    # The autoscaler's job-retry queue and its build queue's dead-letter queue, where found (demand_paths.py):
    # unset, that path is not deployed for this runner type, and its signals are absent.
    job_retry_queue: Annotated[str, Field(max_length=MAX_NAME_LENGTH)] | None = None
    dead_letter_queue: Annotated[str, Field(max_length=MAX_NAME_LENGTH)] | None = None
    # Where jobs are tracked and requests are dead-lettered: the tracked jobs those requests likely stood
    # for (inferred, never read from the queue: collect/dead_letters.py), the latest queued before the move first.
    dead_letter_jobs: list[WaitingJob] = Field(default=[], max_length=5)
    # Where jobs are tracked: the jobs GitHub holds queued, taken by no runner, for longer than a runner boots
    # (jobs.BOOT_GRACE). Beyond the requests on the autoscaler's paths, each is a job whose request was dropped.
    jobs_past_boot: Annotated[int, Field(ge=0)] | None = None
    # For a runner type in breach: what the autoscaler's scale-up and job-retry log lines said over the page's
    # window, or why they could not be read (collect/autoscaler_log.py). Unset: not read this tick.
    autoscaler_log: AutoscalerLog | None = None
    # For a runner type a rule with `forecast:` selects: what its forecast needs, read this tick (forecast/inputs.py).
    forecast: ForecastInputs | None = None

    @field_validator("signals")
    @classmethod
    def _rule_signals_not_negative(cls, signals: dict[SignalName, Reading]) -> dict[SignalName, Reading]:
        for name in RULE_SIGNALS:
            reading = signals.get(name)
            if reading is not None and reading.value is not None and reading.value < 0:
                raise ValueError(f"{name} is {reading.value}, expected 0 or more")
        return signals

    @property
    def degraded(self) -> dict[SignalName, str]:
        """The signals that could not be read, with the reason."""
        return {name: r.error for name, r in self.signals.items() if r.error is not None}

    def value(self, name: SignalName) -> float | None:
        reading = self.signals.get(name)
        return reading.value if reading else None


class SkippedQueue(FrozenModel):
    """A queue a discovery listing found and does not watch under its own name, and why.

    `shadowed`: its jobs are watched all the same, under the identity named in the reason (a named runner
    type owns the queue, or an earlier discovery entry found it). Otherwise nothing watches it: a degraded
    signal, on queuewatch's own page and in `queuewatch status`.
    """

    queue: Annotated[str, Field(max_length=MAX_NAME_LENGTH)]
    reason: Annotated[str, Field(max_length=2 * MAX_NAME_LENGTH)]
    shadowed: bool = False


MAX_SKIPPED_LISTED = 50  # per listing: the snapshot stays small whatever the fleet; `skipped` counts them all


class DiscoveryResult(FrozenModel):
    region: Name
    pattern: Name
    found: int = 0
    error: str | None = None
    skipped: int = Field(default=0, ge=0)  # every queue the listing matched and does not watch under its name
    skipped_queues: list[SkippedQueue] = Field(default=[], max_length=MAX_SKIPPED_LISTED)

    @property
    def unwatched(self) -> list[SkippedQueue]:
        """The skipped queues that nothing watches (not merely shadowed)."""
        return [q for q in self.skipped_queues if not q.shadowed]


class SloWindowCount(FrozenModel):
    """An SLO's jobs decided in one window ending at the snapshot's time (queuewatch/model/slo.py's conventions)."""

    seconds: Annotated[int, Field(gt=0)]
    good: Annotated[int, Field(ge=0)]
    bad: Annotated[int, Field(ge=0)]


class SloReading(FrozenModel):
    """One SLO as the collector read it: each burn window's counts (the started jobs' counters and the jobs
    still waiting past the threshold), and its longest-waiting job; or why it could not be read."""

    name: Name
    windows: list[SloWindowCount] = Field(default=[], max_length=24)
    oldest_waiting_seconds: Annotated[float, Field(ge=0)] | None = None
    error: Annotated[str, Field(max_length=2 * MAX_NAME_LENGTH)] | None = None

    def window(self, seconds: int) -> SloWindowCount | None:
        return next((w for w in self.windows if w.seconds == seconds), None)


class Snapshot(FrozenModel):
    version: Literal[1] = SNAPSHOT_VERSION  # a snapshot of another version is refused, not guessed at
    snapshot_id: Name
    collected_at: UtcDatetime
    runner_types: list[RunnerTypeSnapshot]
    discovery: list[DiscoveryResult] = Field(default=[])
    triage_window_seconds: int = Field(default=900, gt=0)  # the span window_sum and window_first cover
    baseline_seconds: int = Field(default=10800, gt=0)  # the span before the window: baseline_sum, baseline_mean
    # Where jobs are tracked: the label sets no runner type serves (the most waiting first), and the jobs
    # still queued past GitHub's limit, whose later events were lost.
    unmatched_jobs: list[UnmatchedJobs] = Field(default=[], max_length=20)
    expired_jobs: Annotated[int, Field(ge=0)] = 0
    github_hosted_jobs: Annotated[int, Field(ge=0)] = 0  # queued for GitHub's hosted runners: not this fleet's
    slos: list[SloReading] = Field(default=[], max_length=50)  # with tracking and SLOs configured
    # Watched runner types no rule of the collector's config selects (the first 50, sorted; the count of all):
    # nothing pages for them, and the evaluator's monitor says so (evaluate/unjudged.py).
    unjudged: list[str] = Field(default=[], max_length=50)
    unjudged_count: Annotated[int, Field(ge=0)] = 0
    # Where jobs are tracked: each job source's heartbeat (job_sources.py), or why they could not be read.
    job_sources: list[JobSourceBeat] = Field(default=[], max_length=len(SOURCES))
    job_sources_error: Annotated[str, Field(max_length=2 * MAX_NAME_LENGTH)] | None = None
    jobs_tracked: bool = False  # the collector read the tracked jobs this tick (tracking on, the table answered)
    # Runner types in breach whose autoscaler log lines were not read this tick, past the bound a tick reads
    # (autoscaler_log.MAX_READ_PER_TICK, the longest-waiting first): their page rows say so.
    autoscaler_logs_unread: Annotated[int, Field(ge=0)] = 0
    queue_only: bool = False  # no job tracking deployed: the autoscaler's queues alone (autoscaler.QUEUE_ONLY_BLIND)

    @property
    def failed_discovery_regions(self) -> set[str]:
        return {d.region for d in self.discovery if d.error is not None}


@dataclass(frozen=True)
class CollectorFailure:
    """The collector's failure destination record: what failed, and when."""

    at: datetime
    error_type: str
    error_message: str
    request_id: str


Observation = Snapshot | CollectorFailure
"""What one tick gives the evaluator: what the collector saw, or that it failed."""


def observed_at(observation: Observation) -> datetime:
    """The tick's own time: ticks order by it, whatever the evaluator's clock says."""
    return observation.collected_at if isinstance(observation, Snapshot) else observation.at


def observation_label(observation: Observation) -> str:
    return observation.snapshot_id if isinstance(observation, Snapshot) else f"failure:{observation.request_id}"


def check_plausible(observation: Observation, wall_clock: datetime) -> None:
    """Refuse an observation stamped too far from the evaluator's own clock: see MAX_AHEAD and MAX_BEHIND."""
    at = observed_at(observation)
    if at > wall_clock + MAX_AHEAD:
        raise ImplausibleObservation(
            f"{observation_label(observation)} is stamped {at.isoformat()}, {at - wall_clock} ahead of the "
            f"evaluator's clock ({wall_clock.isoformat()}); expected at most {MAX_AHEAD} ahead; refused"
        )
    if at < wall_clock - MAX_BEHIND:
        raise ImplausibleObservation(
            f"{observation_label(observation)} is stamped {at.isoformat()}, {wall_clock - at} behind the "
            f"evaluator's clock ({wall_clock.isoformat()}); expected at most {MAX_BEHIND} behind; refused"
        )
