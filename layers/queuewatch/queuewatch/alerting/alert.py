"""The alert message: a versioned JSON document, the contract every subscriber reads.

Its JSON Schema ships as schemas/alert.v1.schema.json and is generated from
these models (`queuewatch schema`); a test keeps the two equal.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from datetime import UTC, datetime
from importlib import resources
from typing import Any, Literal
from urllib.parse import quote

from pydantic import AwareDatetime, Field

from queuewatch.alerting.triage import Triage
from queuewatch.base.durations import format_duration
from queuewatch.base.frozen import FrozenModel
from queuewatch.base.subjects import SUBJECT_LIMIT, ascii_text, sns_subject
from queuewatch.base.wording import plural
from queuewatch.model.autoscaler_log import AutoscalerLog
from queuewatch.model.demand_paths import PATH_COUNTED, PATH_RULES
from queuewatch.model.github_status import GitHubIncident
from queuewatch.model.rules import HEALTH_RULE, alert_kind
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import QUALIFIER, WaitingJob

ALERT_SCHEMA_ID = "https://github.com/queuewatch/queuewatch/schemas/alert.v1.schema.json"
ALERT_VERSION: Literal["queuewatch.alert/v1"] = "queuewatch.alert/v1"
# What SQS subscribers of the alert topic get: the JSON alert, or the CloudWatch alarm notification the https
# body is, for pipelines built on CloudWatch alarms (they read their queue with raw message delivery).
QueueBody = Literal["alert", "cloudwatch-alarm"]
# Up to this many runner types, the silence names each; past it, the rule and group (or every runner type
# of the rule), so that the command stays one line whatever the size of the incident.
SILENCE_LISTED = 10


class ForecastFigures(FrozenModel):
    """A runner type on a predictive page: when its queue is predicted to pass the rule's queue time, how sure,
    and what the forecast stands on (docs/forecast.md)."""

    queue_time_threshold_seconds: int
    horizon_seconds: int = Field(description="the rule's forecast: how far ahead a predicted late job pages")
    crosses_in_seconds: float = Field(description="when the oldest waiting job is predicted to pass the threshold")
    earliest_in_seconds: float = Field(description="the same at the arrival rate's upper 90% bound")
    latest_in_seconds: float | None = Field(
        description="the same at the arrival rate's lower 90% bound; null: not late at that rate"
    )
    likely: bool = Field(description="late even at the arrival rate's lower bound; else only possible")
    wait_seconds: float = Field(description="the predicted queue time of the first job past the threshold")
    full_in_seconds: float | None = Field(description="when the pool reaches its maximum; null: not in the horizon")
    runners_left: int
    maximum: int
    evidence: str = Field(description="what the forecast stands on: arrivals, runners left, run time, start-up")

    def text(self) -> str:
        """'will queue past 30m in about 8m (likely; 5m-14m): 42 jobs arrived in 10m, 3 runners left of 50, ...'"""
        return f"will queue past {format_duration(self.queue_time_threshold_seconds)} {self.when()}: {self.evidence}"

    def when(self) -> str:
        """'in about 8m (likely; 5m-14m)', or 'in about 8m (possible; from 5m, or not at a lower rate)'."""
        about = _in(self.crosses_in_seconds)
        earliest = _in(self.earliest_in_seconds, bare=True)
        if self.latest_in_seconds is None:
            return f"{about} (possible; from {earliest}, not at a lower arrival rate)"
        latest = _in(self.latest_in_seconds, bare=True)
        return f"{about} (likely; {earliest}-{latest})" if latest != earliest else f"{about} (likely)"


def _in(seconds: float, *, bare: bool = False) -> str:
    """A moment from now, to the minute: 'in about 8m'; under a minute, 'within a minute'."""
    if seconds < 60:
        return "now" if bare else "within a minute"
    text = format_duration(round(seconds / 60) * 60)
    return text if bare else f"in about {text}"


class RunnerTypeFigures(FrozenModel):
    """One runner type in a page, with the numbers that put it there."""

    runner_type: str
    region: str = Field(description="the region of the runner type's queue: every page row names it")
    queue: str
    account: str | None = Field(default=None, description="the queue's AWS account, when not the stack's own")
    team: str
    status: Literal["firing", "resolved"]
    since: AwareDatetime | None = Field(description="when this runner type started firing")
    queue_size: float | None = Field(description="jobs queued: visible + in flight + delayed")
    queue_time_seconds: float | None = Field(description="age of the oldest queued job")
    queue_size_threshold: int | None
    queue_time_threshold_seconds: int | None
    # unserved_jobs: the monitor's jobs:unserved, tracked jobs waiting for labels no runner type serves;
    # untracked_jobs: its jobs:untracked, scale-up requests paging while no job is tracked queued;
    # source_quiet: its source:<bus|webhook>, a job source silent past its own normal gaps;
    # unjudged: its rules:unjudged, watched runner types no rule selects;
    # job_retry_*, dead_letter*: the autoscaler's job-retry and dead-letter queues (rules job-retry, dead-letter)
    breached: list[
        Literal[
            "queue_size",
            "queue_time",
            "no_data",
            "collection_failed",
            "unserved_jobs",
            "untracked_jobs",
            "source_quiet",
            "unjudged",
            "job_retry_checks",
            "job_retry_age",
            "dead_lettered",
            "dead_letter_age",
        ]
    ]
    shown_by: dict[str, Literal["jobs", "queue", "both"]] = Field(
        default_factory=dict,
        description="where jobs are tracked, per breached signal: which of the two that check each other is over "
        "the threshold, the tracked jobs, the autoscaler's queue (scale-up requests), or both",
    )
    missing: dict[str, str] = Field(default_factory=dict, description="signals with no data, and why")
    console_url: str | None = None
    signals: dict[str, float] = Field(
        default_factory=dict, description="every other signal's latest value: busy_runners, total_runners, ..."
    )
    triage: Triage | None = Field(default=None, description="why it queues, likely cause first; firing pages only")
    oldest_jobs: list[WaitingJob] = Field(
        default_factory=list,
        description="where jobs are tracked: the jobs waiting longest, with their links; on a dead-letter page, "
        "the jobs its requests likely stood for (see jobs_note)",
    )
    jobs_note: str | None = Field(
        default=None, description="a dead-letter page: whether its jobs are inferred or unknown, and why"
    )
    autoscaler_log: AutoscalerLog | None = Field(
        default=None,
        description="firing pages of a runner type in breach: what the autoscaler's scale-up and job-retry log "
        "lines said over the page's window (each kind counted, first and last, one line quoted; the log groups; "
        "a Logs Insights link), or why they could not be read (error, naming the log groups)",
    )
    forecast: ForecastFigures | None = Field(
        default=None,
        description="a rule with `forecast:` whose queue is predicted, not yet seen, past its queue time: when "
        "and how sure; null where the queue itself breached or the forecast fell back",
    )

    @property
    def place(self) -> str:
        """Where the queue is, as a page row names it: 'eu-west-1', or 'eu-west-1, account 111122223333'."""
        return f"{self.region}, account {self.account}" if self.account else self.region

    @property
    def label(self) -> str:
        """The runner type as a page row names it: 'linux-x64 (eu-west-1)', or 'linux-x64@eu-west-1' alone when
        its name says where it is already (a qualified identity names its region, and its account if not ours)."""
        _, qualifier, where = self.runner_type.partition(QUALIFIER)
        named = where.startswith(self.region) and (self.account is None or self.account in where)
        return self.runner_type if qualifier and named else f"{self.runner_type} ({self.place})"

    def queue_text(self) -> str:
        """'14 queued, oldest 1h54m', as every body words a runner type's queue; where jobs are tracked,
        the autoscaler's requests beside them ('14 queued, oldest 1h54m; 0 scale-up requests')."""
        size = "no data" if self.queue_size is None else f"{self.queue_size:g} queued"
        age = "no data" if self.queue_time_seconds is None else f"oldest {format_duration(self.queue_time_seconds)}"
        requests = self.signals.get(SignalName.SCALE_UP_REQUESTS)
        shown = sorted(set(self.shown_by.values()))
        seen = {"jobs": "shown by the jobs", "queue": "shown by the queue", "both": "shown by both"}
        by = f" ({seen[shown[0]] if len(shown) == 1 else 'shown by the jobs and the queue'})" if shown else ""
        ahead = f"; forecast: {self.forecast.text()}" if self.forecast is not None else ""
        if requests is None:
            return f"{size}, {age}{by}{ahead}"
        noun = "request" if requests == 1 else "requests"
        jobs = self.signals.get(SignalName.JOBS_QUEUED)
        tracked = f"; {jobs:g} jobs tracked" if jobs is not None else ""
        return f"{size}, {age}{by}; {requests:g} scale-up {noun}{tracked}{ahead}"


class NextWindow(FrozenModel):
    """The config's maintenance window that holds back this alert soonest: open now, or the next to open."""

    name: str
    starts_at: AwareDatetime
    ends_at: AwareDatetime
    time_zone: str
    local: str = Field(description="its span on the zone's clock: 'Tue 2026-12-01 02:00-04:00 Europe/Berlin'")


class Silence(FrozenModel):
    command: str = Field(description="the exact command that silences this alert")
    match: list[str] = Field(
        description="the runner type names or globs the command silences; a few names, or '*' for a large alert"
    )
    team: str | None = Field(default=None, description="the team the command silences, for an alert grouped by team")
    next_window: NextWindow | None = Field(
        default=None, description="the next maintenance window (config) that holds this alert back, if any"
    )


class Alert(FrozenModel):
    version: Literal["queuewatch.alert/v1"] = ALERT_VERSION
    status: Literal["firing", "resolved"]
    page: Literal["new", "update", "repeat", "resolved"]
    priority: Literal["P0", "P1", "P2", "P3"]
    severity: Literal["critical", "warning", "info"]
    title: str = Field(description="stable for the alert from first page to resolve")
    summary: str
    rule: str
    team: str
    teams: list[str] = Field(
        default_factory=list,
        description="every team of the page's runner types, the alert's team first; route on any of them",
    )
    group_by: Literal["all", "team", "runner_type"]
    group: str
    dedup_key: str = Field(description="stable for the alert; downstream systems deduplicate on it")
    notification_id: str = Field(
        description="unique per notification: dedup_key@<the episode's start, UTC, YYYYMMDDTHHMMSSZ>#sequence"
    )
    sequence: int
    started_at: AwareDatetime
    evaluated_at: AwareDatetime
    resolved_at: AwareDatetime | None = None
    runner_types: list[RunnerTypeFigures] = Field(min_length=1)
    runner_types_affected: int
    max_queue_size: float | None
    total_queue_size: float | None = Field(
        default=None, description="jobs queued over every runner type of the page, listed or not"
    )
    max_queue_size_runner_type: str | None
    jobs_queued: float | None = Field(
        default=None,
        description="jobs queued across every runner type of the page, each job counted once however many "
        "queues hold its scale-up request; null when that cannot be known (see jobs_queued_basis)",
    )
    jobs_queued_basis: str | None = Field(default=None, description="how jobs_queued was counted, or why it was not")
    max_queue_time_seconds: float | None
    max_queue_time_runner_type: str | None
    runbook_url: str | None
    dashboard_url: str | None
    silence: Silence
    source: dict[str, str] = Field(description="where the alert came from: stack, account, region, snapshot id")
    likely_cause: str | None = Field(
        default=None, description="the worst runner type's first triage finding, in one line"
    )
    view_url: str | None = Field(
        default=None, description="the stack's CloudWatch dashboard over the time around this page"
    )
    supersedes: list[str] = Field(
        default_factory=list,
        description="on a page of a higher-priority rule: the dedup keys of the lower-priority pages it closes, "
        "each resolved as superseded in the same tick",
    )
    blind_spots: str | None = Field(
        default=None,
        description="what the stack cannot see as it is deployed, said once on every page: without job tracking, "
        "the autoscaler's deletions (at its maximum, on a launch error it does not retry, a dropped job-retry check)",
    )
    github_incident: GitHubIncident | None = Field(
        default=None,
        description="GitHub's own Actions incident while this page fired (where the stack reads GitHub's status): "
        "jobs queue everywhere, whatever the fleet does",
    )
    superseded_by: list[str] = Field(
        default_factory=list,
        description="on a resolve: the dedup keys of the higher-priority pages that cover its runner types; "
        "empty when the queue recovered",
    )
    forecast: bool = Field(
        default=False,
        description="a predictive page (a rule's `forecast:`): every runner type it lists is predicted to queue past "
        "the rule's queue time, none has yet; the episode's next page after the queue forms is false, the same "
        "incident",
    )
    did_not_happen: bool = Field(
        default=False,
        description="on a resolve: the episode stood on forecasts alone, and the forecast fell back before any "
        "queue formed past the threshold",
    )

    def to_json(self) -> str:
        return self.model_dump_json(exclude_none=False)

    @property
    def alarm_state(self) -> Literal["ALARM", "OK"]:
        """The status in CloudWatch's words, which pager integrations key on."""
        return "OK" if self.status == "resolved" else "ALARM"

    @property
    def subject(self) -> str:
        """The SNS subject: state, priority, count and worst figures, then the whole title, within SNS's limit.

        It starts with the CloudWatch alarm state ("ALARM: ", "OK: ") because
        PagerDuty's CloudWatch integration reads the state from the subject as
        well as from NewStateValue, and drops a message whose two disagree.
        When it is too long, the figures are worded shorter, then dropped; the
        title, which names the alert, is cut (between words) only as a last resort.
        """
        heads = self._subject_heads()
        title = ascii_text(self.title)  # measured as SNS will get it: "Zürich" is "Zurich", "…" is "..."
        for head in heads:
            subject = f"{head}: {title}"
            if len(subject) < SUBJECT_LIMIT:
                return sns_subject(subject)
        room = SUBJECT_LIMIT - 1 - len(f"{heads[-1]}: ...")
        words = title[: room + 1].rsplit(" ", 1)[0] if " " in title[: room + 1] else title[:room]
        return sns_subject(f"{heads[-1]}: {words[:room].rstrip(' ,;:(')}...")

    def _subject_heads(self) -> list[str]:
        """From the most to the least said: every head the subject may start with."""
        state = f"{self.alarm_state}: {self.priority}"
        count = plural(self.runner_types_affected, "runner type")
        if self.rule == HEALTH_RULE:  # the monitor's page: what it cannot see, not what queues
            collector = any("collection_failed" in f.breached for f in self.runner_types)
            if self.status == "resolved":
                return [f"{state} queuewatch sees again"]
            if collector:
                return [f"{state} collection failed", state]
            if self.runner_types_affected == 1 and "unjudged" in self.runner_types[0].breached:
                return [f"{state} runner types no rule judges", state]
            unserved = [f for f in self.runner_types if "unserved_jobs" in f.breached]
            if any("source_quiet" in f.breached for f in self.runner_types):
                return [f"{state} a job source went quiet", state]
            if any("untracked_jobs" in f.breached for f in self.runner_types):
                blind = f"{state} tracking blind"
                return [f"{blind}: scale-up requests with no tracked job", blind, state]
            unseen = plural(self.runner_types_affected - len(unserved), "runner type")
            if unserved and self.runner_types_affected == 1:
                return [f"{state} jobs queued that no runner type serves", state]
            if unserved:
                return [f"{state} {unseen} unseen, jobs no runner type serves", f"{state} {unseen} unseen", state]
            return [f"{state} {count} unseen", state]
        if self.runner_types_affected == 1:  # a per-runner-type page names it before the figures
            count = self.runner_types[0].runner_type
        if self.status == "resolved":
            if self.superseded_by:
                return [f"{state} {count} superseded", state]
            if self.did_not_happen:
                return [f"{state} {count} did not happen", state]
            return [f"{state} {count} recovered", state]
        soonest = min(
            (f.forecast for f in self.runner_types if f.forecast), key=lambda f: f.crosses_in_seconds, default=None
        )
        if self.forecast and soonest is not None:
            past = f"forecast to queue past {format_duration(soonest.queue_time_threshold_seconds)}"
            return [f"{state} {count} {past} {_in(soonest.crosses_in_seconds)}", f"{state} {count} {past}", state]
        time, size = self.max_queue_time_seconds, self.max_queue_size
        if self.rule in PATH_RULES:  # the job-retry or dead-letter queue's figures, named as such
            held = f"{size:g} {PATH_COUNTED[self.rule]}" if size is not None else None
            oldest = f"oldest {format_duration(time)}" if time is not None else None
            return [
                ", ".join([f"{state} {count}", *(text for text in (held, oldest) if text)]),
                ", ".join([f"{state} {count}", *(text for text in (oldest,) if text)]),
                f"{state} {count}",
                state,
            ]
        # The short wordings say the page's total, never the worst runner type's as if it were all of it.
        total = self.total_queue_size if self.total_queue_size is not None else size
        wordings = [
            (
                f"max queue time {format_duration(time)}" if time is not None else None,
                f"max queue size {size:g}" if size is not None else None,
            ),
            (f"oldest {format_duration(time)}" if time is not None else None, f"{total:g} queued" if total else None),
            (format_duration(time) if time is not None else None, f"{total:g} queued" if total else None),
        ]
        heads = []
        for wording in wordings:
            figures = [text for text in wording if text]
            heads += [", ".join([f"{state} {count} queueing", *figures]), ", ".join([f"{state} {count}", *figures])]
        return [*heads, f"{state} {count}", state]

    def message_attributes(self) -> dict[str, str | list[str]]:
        """For SNS subscription filter policies; a list goes as String.Array, which a policy matches on any item.

        At most 10: SNS drops a message with more for an SQS subscription with raw message delivery.
        """
        names = [r.runner_type for r in self.runner_types]
        return {
            "status": self.status,
            "kind": alert_kind(self.rule),  # page, ticket or monitor: what the config's routes send where
            "priority": self.priority,
            "severity": self.severity,
            "team": self.team,
            "teams": self.teams or [self.team],
            "rule": self.rule,
            "runner_type": names[0] if len(names) == 1 else "multiple",
        }


def sns_attribute(value: str | list[str]) -> tuple[str, str]:
    """A message attribute as SNS takes it: (DataType, StringValue); a list is a String.Array in JSON."""
    return ("String.Array", json.dumps(value)) if isinstance(value, list) else ("String", value)


def dedup_key(stack: str, rule: str, group: str, scope: str = "") -> str:
    """Stable across the alert's pages and episodes; short enough for any pager.

    `scope` (the stack's account and region) goes into the digest, so stacks of the same name in
    other regions or accounts, publishing into one topic, never share a key.
    """
    digest = hashlib.sha256(f"{stack}\x00{rule}\x00{group}\x00{scope}".encode()).hexdigest()[:12]
    # The digest tells keys apart, so a long name is cut before it, never the digest itself.
    return f"queuewatch/{stack}/{rule}/{group}"[:240] + f"/{digest}"


def silence_for(rule: str, group_by: str, group: str, members: list[str], stack: str, region: str) -> Silence:
    """The command that silences this alert: its runner types by name while they are few, else its rule and group.

    It names the stack as every command does (`--stack NAME@REGION`, found by its outputs), never a table.
    A silence keyed on the rule (and team) also covers runner types that join the alert later, which is
    what an on-call silencing a fleet-wide incident means.
    """
    parts = ["queuewatch", "silence", "add", "--stack", f"{stack}@{region}", "--rule", rule]
    team = group if group_by == "team" else None
    match = ["*"] if len(members) > SILENCE_LISTED else sorted(members)
    if team is not None:
        parts += ["--team", team]
    for name in match:
        parts += ["--match", name]
    parts += ["--for", "2h", "--comment", "why this is silenced"]
    return Silence(command=shlex.join(parts), match=match, team=team)


def queue_metrics_url(region: str, queue_name: str) -> str:
    """The queue's AWS/SQS metrics in the CloudWatch console."""
    return (
        f"https://{region}.console.aws.amazon.com/cloudwatch/home?region={region}#metricsV2:graph=~();"
        f"query=~'*7bAWS*2fSQS*2cQueueName*7d*20{queue_name}"
    )


def metric_url(region: str, namespace: str, metric: str, dimension_values: list[str]) -> str:
    """A metric in the CloudWatch console: its namespace and name, narrowed to the runner type's dimension values."""
    search = " ".join([f"{{{namespace}}}", metric, *dimension_values])
    encoded = "".join(c if c.isalnum() or c in "-_." else f"*{ord(c):02x}" for c in search)
    return (
        f"https://{region}.console.aws.amazon.com/cloudwatch/home?region={region}#metricsV2:graph=~();query=~'{encoded}"
    )


def dashboard_view_url(region: str, dashboard: str, start: datetime, end: datetime) -> str:
    """The stack's dashboard in the CloudWatch console, showing start to end (UTC, to the minute)."""
    host = _console_host(region)
    return (
        f"{host}/cloudwatch/home?region={region}#dashboards/dashboard/{quote(dashboard, safe='')}"
        f"?start={_console_time(start)}&end={_console_time(end)}"
    )


def _console_host(region: str) -> str:
    # The console lives elsewhere in the China and GovCloud partitions.
    if region.startswith("cn-"):
        return f"https://{region}.console.amazonaws.cn"
    if region.startswith("us-gov-"):
        return "https://console.amazonaws-us-gov.com"
    return f"https://{region}.console.aws.amazon.com"


def _console_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:00Z")


def alert_json_schema() -> dict[str, Any]:
    schema = Alert.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": ALERT_SCHEMA_ID, **schema}


def shipped_alert_schema() -> dict[str, Any]:
    text = resources.files("queuewatch").joinpath("schemas/alert.v1.schema.json").read_text(encoding="utf-8")
    return json.loads(text)  # type: ignore[no-any-return]


def worst(values: list[tuple[str, float | None]]) -> tuple[float | None, str | None]:
    known = [(v, name) for name, v in values if v is not None]
    if not known:
        return None, None
    value, name = max(known)
    return value, name
