"""Triage: why a runner type queues, read from its snapshot, the likely cause first.

Each finding names its evidence in numbers. The order is fixed by how directly a
cause explains a queue: runners that sit idle while jobs wait point past capacity
altogether; a scale-up that fails or stalls, or an autoscaler at its maximum, is
why capacity does not grow; a surge, longer jobs or runners short of CPU, memory
or disk is why more is needed; saturation alone is the symptom they share. Missing
or stale signals come last, unless nothing else was found. The triage explains a
page; it never decides one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from queuewatch.base.durations import format_duration
from queuewatch.base.frozen import FrozenModel
from queuewatch.base.wording import plural
from queuewatch.model.autoscaler_log import ORDER, AutoscalerLog, LogCauseKind
from queuewatch.model.jobs import BOOT_GRACE
from queuewatch.model.signals import RESOURCE_SIGNALS, SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot, WaitingJob, runner_type_key

Cause = Literal[
    "log_max_reached",
    "log_launch_failed",
    "log_rate_limited",
    "log_jit_failed",
    "log_retry_dropped",
    "jobs_untracked",
    "no_scale_up_request",
    "idle_not_taking_jobs",
    "rate_limited",
    "scale_up_failing",
    "at_max",
    "arrival_surge",
    "jobs_longer",
    "short_of_resources",
    "saturated",
    "no_data",
    "log_unread",
]

TITLES: dict[Cause, str] = {
    "log_max_reached": "The autoscaler says: maximum reached",
    "log_launch_failed": "The autoscaler says: launch failed",
    "log_rate_limited": "The autoscaler says: GitHub rate limit",
    "log_jit_failed": "The autoscaler says: JIT config failed",
    "log_retry_dropped": "The autoscaler says: retry dropped",
    "log_unread": "The autoscaler's log lines could not be read",
    "jobs_untracked": "Scale-up requests with no tracked job: tracking blind",
    "no_scale_up_request": "Scale-up requests dropped, their jobs still queued",
    "idle_not_taking_jobs": "Idle runners not taking jobs",
    "rate_limited": "GitHub App rate limit nearly spent",
    "scale_up_failing": "Scale-up stalled or failing",
    "at_max": "At the autoscaler's maximum",
    "arrival_surge": "Arrival surge",
    "jobs_longer": "Jobs running longer",
    "short_of_resources": "Runners short of CPU, memory or disk",
    "saturated": "Saturated",
    "no_data": "No data or stale data",
}

SCALE_UP_LOG = "the scale-up log group (/aws/lambda/<prefix>-<key>-scale-up)"  # the multi-runner module's name
UNTRACKED_CAUSES = (
    "the webhook's content type is GitHub's default form (set it to application/json in the hook's settings); "
    "GitHub's secret was rotated and the stack's WebhookSecretArn was not (put the same secret in both); "
    "the repository is not covered by the hook (add the hook at the organization, or to the repository); "
    "TrackFunction is throttled or failing (read its Errors and Throttles, its dead-letter queue and its log "
    "group; raise its concurrency)"
)
"""Why the autoscaler's queue holds requests the jobs table has never heard of, each with its fix."""
NEXT_STEPS: dict[Cause, str] = {
    "log_max_reached": "First: raise runners_maximum_count for this runner type, or free runners. Upstream hands "
    "ephemeral runners' requests back to the queue at the maximum, and deletes the others: re-run those jobs",
    "log_launch_failed": "First: fix what the EC2 code names (permissions, a quota, capacity, the launch template). "
    "A code outside the module's scale_errors is not retried: its requests are deleted, so re-run the jobs, "
    "or add the code to scale_errors",
    "log_rate_limited": "First: spread the control plane's calls over more GitHub Apps (additional_github_apps, "
    "v7.11) or wait for the app's hourly reset",
    "log_jit_failed": "First: check the GitHub App may register runners for this owner, and SSM PutParameter "
    "throttling; upstream retries these requests",
    "log_retry_dropped": "First: re-run the jobs named: the job-retry check was dropped and will not requeue them",
    "log_unread": "First: check the log groups exist and that the collector's role may query them "
    "(AutoscalerPrefix in the stack, autoscaler.prefix in the config)",
    "jobs_untracked": f"First: check the job events' way in. Likely: {UNTRACKED_CAUSES}",
    "no_scale_up_request": "First: re-run the jobs; look in "
    f"{SCALE_UP_LOG} for why it deleted their requests (maximum reached, non-ephemeral; a launch error outside "
    "scale_errors), and in <prefix>-<key>-job-retry's for dropped checks",
    "idle_not_taking_jobs": "First: check that the jobs' runs-on labels match the runner type and that new "
    "runners register with GitHub; look in the runners' own logs and the repository's runner settings",
    "rate_limited": "First: spread the control plane's calls over more GitHub Apps (the module's "
    "additional_github_apps, v7.11) or wait for the app's hourly reset; look in "
    f"{SCALE_UP_LOG} for rate-limit errors",
    "scale_up_failing": f"First: look in {SCALE_UP_LOG} for the errors; if it says the maximum is reached, "
    "raise the autoscaler's runners_maximum_count",
    "at_max": "First: raise the autoscaler's runners_maximum_count for this runner type, or free runners; "
    f"look in {SCALE_UP_LOG} for the scale-ups it refused",
    "arrival_surge": "First: find what started the extra jobs (a new workflow, a retry storm) in the "
    "repository's Actions tab; if the load is real, raise runners_maximum_count",
    "jobs_longer": "First: compare a slow job with a usual one in the repository's Actions tab; look for a "
    "slower dependency, cache or test shard",
    "short_of_resources": "First: move the jobs to a larger instance type or cut their parallelism; look at "
    "the runners' CloudWatch agent metrics",
    "saturated": "First: raise the autoscaler's runners_maximum_count (or its pool size) for this runner type",
    "no_data": "First: check that the queue and metrics the config names exist and that the collector's role "
    "can read them; look in queuewatch's collect log group",
}

SATURATION = 0.9  # busy runners at or above this share of all runners
SURGE_FACTOR = 2.0  # arrivals in the window at least this many times the usual
SURGE_MIN_JOBS = 5  # ... and at least this many more jobs than usual
THROUGHPUT_DROP = 0.5  # the consumer dequeued at most this share of its usual
LONGER_FACTOR = 1.5  # jobs take at least this many times their usual duration
RESOURCE_SHORT = 90.0  # a runner resource at or above this percent used
RATE_LIMIT_LOW = 500.0  # requests left in an app's hourly limit (5,000 at least): below this, scale-ups fail soon
AGED_THROUGH = 0.8  # the oldest job aged through this share of the window: nobody took it


class Finding(FrozenModel):
    cause: Cause
    title: str
    detail: str = Field(description="the evidence, in numbers")
    evidence: dict[str, float] = Field(description="the same numbers, by name")
    next_step: str = Field(default="", description="what to do first, and where to look")
    guess: bool = Field(
        default=False, description="inferred from the figures, not read from the autoscaler's own log lines"
    )


class Triage(FrozenModel):
    findings: list[Finding] = Field(description="likely cause first")
    not_checked: list[str] = Field(
        default_factory=list, description="causes no configured signal can show, and what would show them"
    )
    window_seconds: int = Field(description="the span sums and growth cover")
    baseline_seconds: int = Field(description="the span before the window that 'usual' means")


@dataclass(frozen=True)
class _Growth:
    text: str
    evidence: dict[str, float]


class _Reader:
    def __init__(
        self,
        runner_type: RunnerTypeSnapshot,
        window: int,
        baseline: int,
        fleet_dropped: float | None = None,
        held_by_copies: float | None = 0.0,
    ) -> None:
        self.rt = runner_type
        self.fleet_dropped = fleet_dropped
        self.held_by_copies = held_by_copies
        self.window = window
        self.baseline = baseline
        self.span = format_duration(window)

    def reading(self, signal: SignalName) -> Reading | None:
        reading = self.rt.signals.get(signal)
        return reading if reading is not None and reading.value is not None else None

    def value(self, signal: SignalName) -> float | None:
        reading = self.reading(signal)
        return reading.value if reading else None

    def configured(self, *signals: SignalName) -> bool:
        return all(signal in self.rt.signals for signal in signals)

    def idle(self) -> float | None:
        idle = self.value(SignalName.IDLE_RUNNERS)
        total, busy = self.value(SignalName.TOTAL_RUNNERS), self.value(SignalName.BUSY_RUNNERS)
        if idle is None and total is not None and busy is not None:
            idle = max(0.0, total - busy)
        return idle

    def total(self) -> float | None:
        total = self.value(SignalName.TOTAL_RUNNERS)
        busy, idle = self.value(SignalName.BUSY_RUNNERS), self.value(SignalName.IDLE_RUNNERS)
        if total is None and busy is not None and idle is not None:
            total = busy + idle
        return total

    def growth(self) -> _Growth | None:
        """The queue grew over the window, or its oldest job waited through it untaken."""
        size = self.reading(SignalName.QUEUE_SIZE)
        first = size.window_first if size else None
        last = size.window_last if size else None
        if first is not None and last is not None and last > first:
            return _Growth(
                f"the queue grew from {first:g} to {last:g} jobs in {self.span}",
                {"queue_size_window_start": first, "queue_size_window_end": last},
            )
        age = self.reading(SignalName.QUEUE_TIME)
        then = age.window_first if age else None
        now = age.value if age else None
        if then is not None and now is not None and now - then >= AGED_THROUGH * self.window:
            return _Growth(
                f"the oldest job aged from {format_duration(then)} to {format_duration(now)} without being taken",
                {"queue_time_window_start_seconds": then, "queue_time_seconds": now},
            )
        return None


def triage(
    runner_type: RunnerTypeSnapshot,
    *,
    window: int,
    baseline: int,
    requests_shared: bool = False,
    fleet_dropped: float | None = None,
    held_by_copies: float | None = 0.0,
) -> Triage:
    """The findings for one queueing runner type, most likely cause first. `requests_shared`: under `all` dispatch
    with a job tracked queued under a runner type that could share a job with this one (evaluate/blindness.py), a
    request with no job of this runner type's is not tracking blind. `fleet_dropped`: under `all` dispatch, the
    fleet's dropped requests (fleet_dropped()), which bound this runner type's. `held_by_copies`: the requests its
    copies elsewhere hold for its jobs (held_by_copies()), None where one was not read."""
    reader = _Reader(runner_type, window, baseline, fleet_dropped, held_by_copies)
    said = _from_log(runner_type.autoscaler_log)
    findings = said + [
        finding
        for check in (
            *(() if requests_shared else (_untracked,)),
            _no_request,
            _idle,
            _rate_limited,
            _scale_up_failing,
            _at_max,
            _surge,
            _longer,
            _short_of_resources,
            _saturated,
            _no_data,
        )
        if (finding := check(reader)) is not None and not (said and finding.guess)
    ]
    log = runner_type.autoscaler_log
    if log is not None and log.error is None:
        findings = [
            f.model_copy(update={"detail": f.detail.replace(f"({GUESS})", f"({GUESS_READ})")}) if f.guess else f
            for f in findings
        ]
    unread = _log_unread(log)
    findings += [unread] if unread else []
    return Triage(findings=findings, not_checked=_not_checked(reader), window_seconds=window, baseline_seconds=baseline)


def _finding(cause: Cause, parts: list[str], evidence: dict[str, float], *, guess: bool = False) -> Finding:
    detail = "; ".join(parts) + (f" ({GUESS})" if guess else "")
    return Finding(
        cause=cause, title=TITLES[cause], detail=detail, evidence=evidence, next_step=NEXT_STEPS[cause], guess=guess
    )


GUESS = "a guess"
GUESS_READ = "a guess: no line of the autoscaler's log says more"  # its lines were read and said nothing of it
MAX_LOG_FINDINGS = 3  # a page row stays short: the likeliest kinds, each with its quoted line


def _from_log(log: AutoscalerLog | None) -> list[Finding]:
    """What the autoscaler wrote, one finding per kind it wrote (the likeliest first), each quoting its line."""
    if log is None or not log.causes:
        return []
    out: list[Finding] = []
    for kind in ORDER:
        causes = [c for c in log.causes if c.kind is kind]
        if not causes or len(out) == MAX_LOG_FINDINGS:
            continue
        first = causes[0]
        # One line quoted; the others of its kind (another EC2 code, another log group) by their headline.
        parts = [first.text(), *(f"{c.headline} ({c.count}x, {c.log_group})" for c in causes[1:4])]
        evidence: dict[str, float] = {"log_lines": float(sum(c.count for c in causes))}
        if first.current_runners is not None:
            evidence["current_runners"] = float(first.current_runners)
        if first.maximum_runners is not None:
            evidence["max_runners"] = float(first.maximum_runners)
        cause: Cause = LOG_CAUSES[kind]
        step = NEXT_STEPS[cause] + (f"; the lines in Logs Insights: {log.query_url}" if log.query_url else "")
        out.append(
            Finding(cause=cause, title=TITLES[cause], detail="; ".join(parts), evidence=evidence, next_step=step)
        )
    return out


def _log_unread(log: AutoscalerLog | None) -> Finding | None:
    if log is None or log.error is None:
        return None
    return Finding(
        cause="log_unread",
        title=TITLES["log_unread"],
        detail=log.error,
        evidence={},
        next_step=NEXT_STEPS["log_unread"],
    )


LOG_CAUSES: dict[LogCauseKind, Cause] = {
    LogCauseKind.MAX_REACHED: "log_max_reached",
    LogCauseKind.LAUNCH_FAILED: "log_launch_failed",
    LogCauseKind.RATE_LIMITED: "log_rate_limited",
    LogCauseKind.JIT_FAILED: "log_jit_failed",
    LogCauseKind.RETRY_DROPPED: "log_retry_dropped",
}


def _untracked(r: _Reader) -> Finding | None:
    """Scale-up requests in the autoscaler's queue while the jobs table holds no queued job for the runner
    type: the jobs' events are not arriving, so the jobs are blind and the queue alone shows the demand."""
    jobs, requests = r.value(SignalName.JOBS_QUEUED), r.value(SignalName.SCALE_UP_REQUESTS)
    if jobs != 0 or not requests:
        return None
    age = r.value(SignalName.SCALE_UP_REQUEST_AGE)
    aged = f", the oldest {format_duration(age)} old" if age else ""
    return _finding(
        "jobs_untracked",
        [f"the autoscaler's queue holds {plural(requests, 'scale-up request')}{aged}, and no job is tracked queued"],
        {"scale_up_requests": requests, "jobs_queued": 0, **({"scale_up_request_age_seconds": age} if age else {})},
    )


def _no_request(r: _Reader) -> Finding | None:
    """Tracked jobs GitHub holds queued, taken by no runner for longer than a runner boots, beyond every request
    the autoscaler still holds for them: its build queue's, its job-retry checks and its dead-lettered requests,
    each job counted once. Each is a job whose request left the queue with the job still waiting: upstream's
    scale-up deleted it (at runners_maximum_count with non-ephemeral runners, or on a launch error outside
    scale_errors), or a job-retry check that met an error dropped it. A drop, never a recovery. Under `all`
    dispatch one job's request sits in every matching queue: the finding counts the fleet's (`fleet`), a bound
    that never names a job whose request waits elsewhere."""
    past_boot = r.rt.jobs_past_boot
    jobs = r.value(SignalName.JOBS_QUEUED)
    own, copies = _on_paths(r.rt), r.held_by_copies
    if past_boot is None or jobs is None or own is None or copies is None:
        return None
    paths = own + copies
    dropped = past_boot - paths if r.fleet_dropped is None else min(past_boot, r.fleet_dropped)
    if dropped <= 0:
        return None
    oldest = r.value(SignalName.OLDEST_JOB_AGE)
    waited = f", the oldest {format_duration(oldest)} old" if oldest else ""
    held = _held(r.rt, copies)
    fleet = r.fleet_dropped is not None
    named = [] if fleet else [_job_words(job) for job in r.rt.oldest_jobs[: int(min(dropped, 3))]]
    whose = f"at least {dropped:g} of the fleet's jobs" if fleet else plural(dropped, "job")
    parts = [
        f"GitHub holds {plural(jobs, 'job')} queued that no runner took{waited}; {past_boot:g} of them for longer "
        f"than a runner boots ({format_duration(BOOT_GRACE.total_seconds())}), while {held}",
        f"the scale-up requests of {whose} were dropped: they left the autoscaler's queues with the "
        "jobs still waiting, and no runner will be started for them"
        + (
            " (counted across the fleet: under `all` dispatch a job's request sits in every matching queue)"
            if fleet
            else ""
        ),
    ]
    if named:
        parts.append("the longest waiting: " + ", ".join(named))
    return _finding(
        "no_scale_up_request",
        parts,
        {
            "jobs_queued": jobs,
            "jobs_past_boot": past_boot,
            "requests_on_paths": paths,
            "requests_dropped": dropped,
            **({"oldest_job_seconds": oldest} if oldest else {}),
        },
    )


def _on_paths(rt: RunnerTypeSnapshot, build: SignalName = SignalName.SCALE_UP_REQUESTS) -> float | None:
    """The requests the autoscaler still holds for a runner type's jobs: its build queue's, its job-retry checks
    (a runner started, the job to be re-queued if still waiting) and its dead-lettered requests (paged on their
    own). None when one of them was not read: a request in an unread queue cannot be told from a drop."""
    total = 0.0
    for signal in (build, SignalName.JOB_RETRY_CHECKS, SignalName.DEAD_LETTERED):
        reading = rt.signals.get(signal)
        if reading is None and signal is not build:
            continue  # that path is not deployed for this runner type
        if reading is None or reading.value is None:
            return None
        total += reading.value
    return total


def held_by_copies(runner_types: Iterable[RunnerTypeSnapshot]) -> dict[str, float | None]:
    """Per runner type key, the requests its copies in other regions or accounts hold (collect/queues.py): jobs
    are routed to the key, and a job's request may sit in any copy's queue. None where a copy was not read."""
    out: dict[str, float | None] = {}
    for rt in runner_types:
        key = runner_type_key(rt.name)
        if key == rt.name:
            continue
        # A copy gets no jobs (collect/jobs.py), so its queue size is its build queue's requests alone.
        held, prior = _on_paths(rt, SignalName.QUEUE_SIZE), out.get(key, 0.0)
        out[key] = None if held is None or prior is None else prior + held
    return out


def fleet_dropped(runner_types: Iterable[RunnerTypeSnapshot]) -> float | None:
    """Under `all` dispatch: the fleet's tracked jobs past boot beyond every request its queues hold (a key's copies
    elsewhere included), a lower bound on its dropped requests (a job's copies in several queues only lower it).
    None if any queue was not read."""
    past_boot = paths = 0.0
    for rt in runner_types:
        if not rt.queue_name:
            continue  # no build queue (queue: none, a scale-set lane): the autoscaler's requests are not its way
        tracked = rt.jobs_past_boot is not None
        held = _on_paths(rt) if tracked else _on_paths(rt, SignalName.QUEUE_SIZE)
        if held is None:
            return None
        past_boot += rt.jobs_past_boot or 0
        paths += held
    return max(0.0, past_boot - paths)


def _held(rt: RunnerTypeSnapshot, copies: float) -> str:
    words = [f"its build queue holds {plural(rt.value(SignalName.SCALE_UP_REQUESTS) or 0, 'request')}"]
    checks, dead = rt.value(SignalName.JOB_RETRY_CHECKS), rt.value(SignalName.DEAD_LETTERED)
    if checks is not None:
        words.append(f"its job-retry queue {plural(checks, 'check')}")
    if dead is not None:
        words.append(f"its dead-letter queue {plural(dead, 'request')}")
    if copies:
        words.append(f"its copies in other regions or accounts {plural(copies, 'request')}")
    return ", ".join(words)


def _job_words(job: WaitingJob) -> str:
    return job.repo + (f" run {job.run_id}" if job.run_id else "")


def _idle(r: _Reader) -> Finding | None:
    idle = r.idle()
    growth = r.growth()
    if idle is None or idle < 1 or growth is None:
        return None
    return _finding(
        "idle_not_taking_jobs",
        [f"{plural(idle, 'idle runner')} while {growth.text}"],
        {"idle_runners": idle, **growth.evidence},
    )


def _rate_limited(r: _Reader) -> Finding | None:
    """A GitHub App with few requests left: scale-up cannot register runners or check jobs until it resets.
    Per app: with several apps (additional_github_apps) one spent app fails the calls that pick it."""
    limits = r.reading(SignalName.GITHUB_APP_RATE_LIMIT)
    if limits is None or not limits.by_name or (limits.value or 0) >= RATE_LIMIT_LOW:
        return None
    by_app = sorted(limits.by_name.items(), key=lambda item: (item[1], item[0]))
    low = [f"app {app}: {left:g} requests left" for app, left in by_app if left < RATE_LIMIT_LOW]
    others = [f"app {app}: {left:g}" for app, left in by_app if left >= RATE_LIMIT_LOW]
    parts = ["; ".join(low) + _fleet(limits)] + ([f"the other apps have {', '.join(others)}"] if others else [])
    return _finding("rate_limited", parts, {f"github_app_{app}_remaining": left for app, left in by_app})


def _scale_up_failing(r: _Reader) -> Finding | None:
    parts: list[str] = []
    evidence: dict[str, float] = {}
    failures = r.reading(SignalName.CREATION_FAILURES)
    if failures and failures.window_sum:
        parts.append(f"{plural(failures.window_sum, 'runner creation')} failed in {r.span}{_fleet(failures)}")
        evidence["creation_failures"] = failures.window_sum
    exceptions = r.reading(SignalName.EC2_EXCEPTIONS)
    if exceptions and exceptions.window_sum and exceptions.by_name:
        named = sorted(exceptions.by_name.items(), key=lambda item: (-item[1], item[0]))
        parts.append(
            "EC2 RunInstances errors in "
            + f"{r.span}{_fleet(exceptions)}: "
            + ", ".join(f"{name} {count:g}" for name, count in named)
        )
        evidence.update({f"ec2_exception_{name}": count for name, count in named})
    dequeued = r.reading(SignalName.JOBS_DEQUEUED)
    growth = r.growth()
    if growth and dequeued and dequeued.window_sum is not None and dequeued.baseline_sum is not None:
        usual = dequeued.baseline_sum
        arrivals = r.reading(SignalName.JOB_ARRIVALS)
        arrived = arrivals.window_sum if arrivals and arrivals.window_sum is not None else None
        dropped = usual >= 1 and dequeued.window_sum <= THROUGHPUT_DROP * usual
        starved = dequeued.window_sum == 0 and (arrived or 0) > 0
        if dropped or starved:
            parts.append(
                f"{growth.text} while the scale-up consumer dequeued {dequeued.window_sum:g}{_fleet(dequeued)} "
                f"(usually {usual:.4g} per {r.span})"
            )
            evidence.update(growth.evidence)
            evidence["jobs_dequeued"] = dequeued.window_sum
            evidence["jobs_dequeued_usual"] = round(usual, 2)
            if not _can_see_max(r):
                parts.append(
                    "or the autoscaler is at its maximum with ephemeral runners, which hand requests back to the "
                    "queue (with non-ephemeral runners upstream deletes them instead: the queue empties)"
                )
    if not parts:
        return None
    # Failures and EC2 errors are counted; a stalled consumer alone is inferred.
    inferred = "creation_failures" not in evidence and not any(k.startswith("ec2_exception_") for k in evidence)
    return _finding("scale_up_failing", parts, evidence, guess=inferred)


def _at_max(r: _Reader) -> Finding | None:
    parts: list[str] = []
    evidence: dict[str, float] = {}
    total, maximum = r.total(), r.value(SignalName.MAX_RUNNERS)
    if total is not None and maximum is not None and maximum > 0 and total >= maximum:
        parts.append(f"{plural(total, 'runner')}, the autoscaler's maximum is {maximum:g}")
        evidence.update(total_runners=total, max_runners=maximum)
    hits = r.reading(SignalName.MAX_HIT)
    if hits and hits.window_sum:
        parts.append(f"the autoscaler refused {plural(hits.window_sum, 'scale-up')} at its maximum in {r.span}")
        evidence["max_hit"] = hits.window_sum
    return _finding("at_max", parts, evidence) if parts else None


def _surge(r: _Reader) -> Finding | None:
    arrivals = r.reading(SignalName.JOB_ARRIVALS)
    if not arrivals or arrivals.window_sum is None or arrivals.baseline_sum is None:
        return None
    now, usual = arrivals.window_sum, arrivals.baseline_sum
    if now < SURGE_FACTOR * usual or now - usual < SURGE_MIN_JOBS:
        return None
    against = f"{now / usual:.1f}x the usual {usual:.4g}" if usual > 0 else "against none usually"
    return _finding(
        "arrival_surge",
        [
            f"{plural(now, 'job')} arrived in {r.span}{_fleet(arrivals)}, {against} per {r.span} "
            f"over the {format_duration(r.baseline)} before"
        ],
        {"job_arrivals": now, "job_arrivals_usual": round(usual, 2)},
    )


def _longer(r: _Reader) -> Finding | None:
    duration = r.reading(SignalName.JOB_DURATION)
    if not duration or duration.value is None or not duration.baseline_mean:
        return None
    if duration.value < LONGER_FACTOR * duration.baseline_mean:
        return None
    return _finding(
        "jobs_longer",
        [
            f"jobs take {format_duration(duration.value)}, {duration.value / duration.baseline_mean:.1f}x the usual "
            f"{format_duration(duration.baseline_mean)} over the {format_duration(r.baseline)} before"
        ],
        {"job_duration_seconds": duration.value, "job_duration_usual_seconds": duration.baseline_mean},
    )


def _short_of_resources(r: _Reader) -> Finding | None:
    parts: list[str] = []
    evidence: dict[str, float] = {}
    for signal, word in RESOURCE_SIGNALS.items():
        reading = r.reading(signal)
        if reading is None or reading.value is None or reading.value < RESOURCE_SHORT:
            continue
        usual = f" (usually {reading.baseline_mean:.0f}%)" if reading.baseline_mean is not None else ""
        parts.append(f"{word} {reading.value:.0f}% used{_fleet(reading)}{usual}")
        evidence[f"{signal.value}_percent"] = reading.value
    if not parts:
        return None
    parts.append(f"at or above {RESOURCE_SHORT:.0f}%: jobs run slower or fail, and runners free up later")
    return _finding("short_of_resources", parts, evidence)


def _saturated(r: _Reader) -> Finding | None:
    busy, total = r.value(SignalName.BUSY_RUNNERS), r.total()
    if busy is None or not total or busy < SATURATION * total:
        return None
    return _finding(
        "saturated",
        [f"{busy:g} of {total:g} runners busy ({100 * busy / total:.0f}%)"],
        {"busy_runners": busy, "total_runners": total},
    )


def _no_data(r: _Reader) -> Finding | None:
    degraded = r.rt.degraded
    if not degraded:
        return None
    return _finding(
        "no_data",
        [f"{name.value}: {reason}" for name, reason in sorted(degraded.items())],
        {},
    )


def _fleet(reading: Reading) -> str:
    return " (fleet-wide)" if reading.fleet_wide else ""


def _can_see_max(r: _Reader) -> bool:
    return r.configured(SignalName.MAX_HIT) or (
        r.configured(SignalName.MAX_RUNNERS)
        and (r.configured(SignalName.TOTAL_RUNNERS) or r.configured(SignalName.BUSY_RUNNERS, SignalName.IDLE_RUNNERS))
    )


def _not_checked(r: _Reader) -> list[str]:
    out: list[str] = []
    s = SignalName
    if not (r.configured(s.IDLE_RUNNERS) or r.configured(s.TOTAL_RUNNERS, s.BUSY_RUNNERS)):
        out.append(f"{TITLES['idle_not_taking_jobs']}: needs idle_runners, or total_runners and busy_runners")
    if not any(r.configured(signal) for signal in (s.CREATION_FAILURES, s.EC2_EXCEPTIONS, s.JOBS_DEQUEUED)):
        out.append(f"{TITLES['scale_up_failing']}: needs creation_failures, ec2_exceptions or jobs_dequeued")
    if not _can_see_max(r):
        out.append(f"{TITLES['at_max']}: needs max_hit, or max_runners with total_runners")
    if not r.configured(s.JOB_ARRIVALS):
        out.append(f"{TITLES['arrival_surge']}: needs job_arrivals")
    if not r.configured(s.JOB_DURATION):
        out.append(f"{TITLES['jobs_longer']}: needs job_duration")
    if not any(r.configured(signal) for signal in RESOURCE_SIGNALS):
        out.append(f"{TITLES['short_of_resources']}: needs cpu_used, memory_used or disk_used")
    if not (r.configured(s.BUSY_RUNNERS) and (r.configured(s.TOTAL_RUNNERS) or r.configured(s.IDLE_RUNNERS))):
        out.append(f"{TITLES['saturated']}: needs busy_runners with total_runners or idle_runners")
    return out
