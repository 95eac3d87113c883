"""The autoscaler's own words: its scale-up and job-retry log lines, named, queried and classified.

terraform-aws-github-runner's control-plane Lambdas log Powertools JSON (`level`, `message`, `service`,
`function-name`, the extra fields). Read from its source (lambdas/, per tag), the lines that say why a job
waits, in both wordings:

- maximum reached: `No runner will be created, maximum number of runners reached.` (v5-v6) and `Not all
  runners will be created for this group, maximum number of runners reached.` (v7.0 on); the count it
  judged comes before it, `Current runners: <n> of <m>` (v5-v6) or `Current runners` with
  `currentRunners` and `maximumRunners` (v7.0 on);
- launch failed: `Create fleet request failed.` (the API threw: `error.name` is EC2's code; v7.11 adds
  `retryable`), `Create fleet failed, error not recognized as scaling error.` (v5-v7.10, not retried, the
  fleet's `data[].ErrorCode`), `Create fleet failed, ScaleError will be thrown to trigger retry ...`
  (v5-v7.10, retried) and `Create fleet did not create every requested instance.` (v7.11:
  `fleetErrorsTriggeringRetry` and `fleetErrorsNotTriggeringRetry`, each with its `ErrorCode`);
- GitHub rate limit: `GitHub rate limit: Request quota exhausted for request ...` or `... SecondaryRateLimit
  detected ...` (v5.21 on);
- JIT config failed: `Failed to create JIT config for some instances` (v7.11, ERROR);
- retry dropped: `Error processing job retry: <message>` (the job-retry Lambda; the check is not retried).

Upstream's function names (modules/runners/scale-up.tf, modules/lambda via job-retry/) are the build queue's
base, `<prefix>-<key>` in the multi-runner module or `<prefix>` in the single one, with `-scale-up` and
`-job-retry`; each logs to `/aws/lambda/<function name>`. Pure: no AWS, no YAML.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, Field

from queuewatch.base.frozen import FrozenModel
from queuewatch.model.demand_paths import BUILD_QUEUE

UtcDatetime = Annotated[AwareDatetime, AfterValidator(lambda value: value.astimezone(UTC))]

DEFAULT_SCALE_ERRORS_V5_TO_V7_1 = frozenset(
    {
        "UnfulfillableCapacity",
        "MaxSpotInstanceCountExceeded",
        "TargetCapacityLimitExceededException",
        "RequestLimitExceeded",
        "ResourceLimitExceeded",
        "MaxSpotFleetRequestCountExceeded",
        "InsufficientInstanceCapacity",
    }
)
"""EC2 error codes upstream retries, written into control-plane/src/aws/runners.ts from v5.0 to v7.1."""
DEFAULT_SCALE_ERRORS = DEFAULT_SCALE_ERRORS_V5_TO_V7_1 | {"InsufficientCapacityOnHost"}
"""From v7.2, the `scale_errors` variable's default (variables.tf, modules/runners, modules/multi-runner's
runner_config), which replaces the list: a deploy may set its own."""

LOG_GROUP_PREFIX = "/aws/lambda/"
SCALE_UP_SUFFIX = "-scale-up"
JOB_RETRY_SUFFIX = "-job-retry"
MAX_LOG_GROUPS_PER_QUERY = 50  # StartQuery's logGroupNames takes at most 50
MAX_READ_PER_TICK = 25  # runner types in breach read a tick, the longest-waiting first: 50 log groups, one query
PAST_THE_BOUND = (
    f"not read this tick: {MAX_READ_PER_TICK} runner types in breach are read a tick, the longest-waiting first"
)
MAX_QUOTED = 300  # characters of the quoted line: a page row stays short
MAX_CAUSES = 6  # per runner type, the likeliest first: 25 read a tick keep the snapshot and the page small
MAX_JOBS_NAMED = 5


class LogCauseKind(StrEnum):
    MAX_REACHED = "max_reached"
    LAUNCH_FAILED = "launch_failed"
    RATE_LIMITED = "rate_limited"
    JIT_FAILED = "jit_failed"
    RETRY_DROPPED = "retry_dropped"


WORDS: dict[LogCauseKind, str] = {
    LogCauseKind.MAX_REACHED: "maximum reached",
    LogCauseKind.LAUNCH_FAILED: "launch failed",
    LogCauseKind.RATE_LIMITED: "GitHub rate limit",
    LogCauseKind.JIT_FAILED: "JIT config failed",
    LogCauseKind.RETRY_DROPPED: "retry dropped",
}
ORDER = list(LogCauseKind)  # how directly each explains a wait: the page leads with the first found


class LogCause(FrozenModel):
    """One kind of the autoscaler's lines in one log group over the window: how many, when, one quoted."""

    kind: LogCauseKind
    log_group: str
    count: Annotated[int, Field(ge=1)]
    first_at: UtcDatetime
    last_at: UtcDatetime
    line: str = Field(description="the latest such line, as the autoscaler wrote it (cut to 300 characters)")
    current_runners: int | None = Field(default=None, description="max_reached: the count it judged")
    maximum_runners: int | None = Field(default=None, description="max_reached: its runners_maximum_count")
    error_code: str | None = Field(default=None, description="launch_failed: EC2's error code")
    retried: bool | None = Field(
        default=None,
        description="launch_failed: whether upstream retries the request (its scale_errors); null when the line "
        "does not say and the version decides",
    )
    job_ids: list[int] = Field(default=[], max_length=MAX_JOBS_NAMED, description="retry_dropped: the jobs named")

    @property
    def headline(self) -> str:
        """'maximum reached (50 of 50 runners)', 'launch failed: UnauthorizedOperation, not retried'."""
        words = WORDS[self.kind]
        if self.kind is LogCauseKind.MAX_REACHED and self.maximum_runners is not None:
            current = "?" if self.current_runners is None else f"{self.current_runners}"
            return f"{words} ({current} of {self.maximum_runners} runners)"
        if self.kind is LogCauseKind.LAUNCH_FAILED:
            retried = {True: "retried", False: "not retried: the request is deleted", None: "retry per version"}
            return f"{words}: {self.error_code or 'unknown error'}, {retried[self.retried]}"
        if self.kind is LogCauseKind.RETRY_DROPPED and self.job_ids:
            return f"{words} (job {', '.join(str(j) for j in self.job_ids)})"
        return words

    def text(self) -> str:
        times = f"{self.count}x, {_hhmm(self.first_at)}" + (
            f" to {_hhmm(self.last_at)}" if self.last_at != self.first_at else ""
        )
        return f'{self.headline} ({times} UTC, {self.log_group}): "{self.line}"'


class AutoscalerLog(FrozenModel):
    """What the autoscaler's log groups for one runner type said over the window, or why they could not be read."""

    log_groups: list[str] = Field(max_length=4)
    since: UtcDatetime
    until: UtcDatetime
    causes: list[LogCause] = Field(default=[], max_length=MAX_CAUSES, description="the likeliest first (ORDER)")
    error: str | None = Field(default=None, description="set when the logs could not be read: never a quiet zero")
    query_url: str | None = Field(default=None, description="the Logs Insights console, this query over the window")


@dataclass(frozen=True)
class LogRow:
    """One row of the query's answer: lines of one message in one log group, how many, first, last, the latest."""

    log_group: str
    count: int
    first_at: datetime
    last_at: datetime
    line: str


def function_base(queue_name: str | None, prefix: str | None, key: str) -> str | None:
    """The autoscaler's function name base for a runner type: its build queue's base where upstream named the
    queue (`<prefix>-<key>-queued-builds`, or `<prefix>-queued-builds` in the single-runner module), else
    `<prefix>-<key>` from the configured prefix; None when neither says."""
    found = BUILD_QUEUE.match(queue_name or "")
    if found is not None:
        return found["base"]
    return f"{prefix}-{key}" if prefix else None


def log_groups(base: str) -> list[str]:
    """The scale-up and job-retry log groups of the functions upstream names after `base`."""
    return [f"{LOG_GROUP_PREFIX}{base}{SCALE_UP_SUFFIX}", f"{LOG_GROUP_PREFIX}{base}{JOB_RETRY_SUFFIX}"]


_PATTERNS = [
    "maximum number of runners reached",
    "Current runners",
    "Create fleet",
    "GitHub rate limit",
    "Failed to create JIT config for some instances",
    "Error processing job retry",
]
INSIGHTS_QUERY = (
    "fields @timestamp, @message\n"
    f"| filter {' or '.join(f'message like {json.dumps(p)}' for p in _PATTERNS)}\n"
    "| stats count(*) as n, min(@timestamp) as first, max(@timestamp) as last, latest(@message) as line"
    " by @log, message, error.name, `data.0.ErrorCode`, `github.workflow_job_id`\n"
    "| limit 10000"
)
"""One row per log group, message and what tells its lines apart (EC2's code, the job): exact counts however many
lines, and few rows. The console link opens the same lines unaggregated."""
CONSOLE_QUERY = (
    "fields @timestamp, level, message, @log\n"
    f"| filter {' or '.join(f'message like {json.dumps(p)}' for p in _PATTERNS)}\n"
    "| sort @timestamp desc"
)


def insights_url(region: str, groups: list[str], since: datetime, until: datetime) -> str:
    """The Logs Insights console with the lines of these log groups over since..until (UTC)."""

    def enc(text: str) -> str:
        return "".join(c if c.isalnum() or c in "-_." else f"*{ord(c):02x}" for c in text)

    def at(moment: datetime) -> str:
        return enc(moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z"))

    sources = "".join(f"~'{enc(group)}" for group in groups)
    detail = (
        f"~(end~'{at(until)}~start~'{at(since)}~timeType~'ABSOLUTE~tz~'UTC"
        f"~editorString~'{enc(CONSOLE_QUERY)}~source~({sources}))"
    )
    return f"{_console_host(region)}/cloudwatch/home?region={region}#logsV2:logs-insights$3FqueryDetail$3D{detail}"


def _console_host(region: str) -> str:
    if region.startswith("cn-"):
        return f"https://{region}.console.amazonaws.cn"
    if region.startswith("us-gov-"):
        return "https://console.amazonaws-us-gov.com"
    return f"https://{region}.console.aws.amazon.com"


_CURRENT_V6 = re.compile(r"^Current runners: (\d+) of (-?\d+)")
_RETRY_DROPPED = "Error processing job retry: "
_JOB_IN_URL = re.compile(r"/actions/jobs/(\d+)")


@dataclass(frozen=True)
class _Said:
    """One row read: its kind and what tells it apart."""

    kind: LogCauseKind
    code: str | None = None
    retried: bool | None = None
    job_id: int | None = None


def classify(rows: Iterable[LogRow]) -> list[LogCause]:
    """The rows' causes, per log group and kind (and EC2 code): counts summed, first and last, the latest line.
    A maximum reached carries the latest count read in its log group. Lines of no known wording are ignored."""
    rows = list(rows)
    counts = _latest_counts(rows)
    merged: dict[tuple[str, LogCauseKind, str | None, bool | None], LogCause] = {}
    for row in rows:
        fields = _fields(row.line)
        for said in _said(fields):
            key = (row.log_group, said.kind, said.code, said.retried)
            found = merged.get(key)
            jobs = [said.job_id] if said.job_id is not None else []
            if found is None:
                current, maximum = counts.get(row.log_group, (None, None))
                is_max = said.kind is LogCauseKind.MAX_REACHED
                merged[key] = LogCause(
                    kind=said.kind,
                    log_group=row.log_group,
                    count=row.count,
                    first_at=row.first_at,
                    last_at=row.last_at,
                    line=_quoted(fields, row.line),
                    current_runners=current if is_max else None,
                    maximum_runners=maximum if is_max else None,
                    error_code=said.code,
                    retried=said.retried,
                    job_ids=jobs,
                )
                continue
            latest = row.last_at > found.last_at
            merged[key] = found.model_copy(
                update={
                    "count": found.count + row.count,
                    "first_at": min(found.first_at, row.first_at),
                    "last_at": max(found.last_at, row.last_at),
                    "line": _quoted(fields, row.line) if latest else found.line,
                    "job_ids": sorted(set(found.job_ids) | set(jobs))[-MAX_JOBS_NAMED:],
                }
            )
    return sorted(merged.values(), key=lambda c: (ORDER.index(c.kind), -c.count, c.log_group, c.error_code or ""))


def _fields(line: str) -> dict[str, Any]:
    try:
        parsed = json.loads(line)
    except ValueError:
        return {"message": line}  # a plain-text line (another logger): judged by its text alone
    return parsed if isinstance(parsed, dict) else {"message": line}


def _message(fields: dict[str, Any]) -> str:
    message = fields.get("message")
    return message if isinstance(message, str) else ""


@dataclass(frozen=True)
class RunnerCountLine:
    """The latest `Current runners` line of one scale-up log group: the runners it counted, its maximum, when."""

    at: datetime
    current: int | None
    maximum: int | None


def latest_counts(rows: Iterable[LogRow]) -> dict[str, RunnerCountLine]:
    """Per log group, the latest `Current runners` count read, in either wording.

    Upstream's scale-up (lambdas/functions/control-plane/src/scale-runners/scale-up.ts) writes it each time it
    handles a batch of jobs, before judging the maximum:
    - v6.x (v6.0.0 to v6.10.1): per job, `Current runners: <n> of <m>` in the message's text, no fields, and
      only when a maximum is set (`runners_maximum_count` -1 writes none); the figures are read from the text;
    - v7.x (v7.0.0 to v7.11.0): per owner group of the batch, the message `Current runners` with the fields
      `currentRunners` and `maximumRunners` (-1: no maximum, and currentRunners 0, not counted).
    Both count the runners of the job's owner (an org, or a repository with repository-level runners): a
    fleet whose runner type serves several owners has one count per owner, and the latest line read is one of
    them. The query's rows group lines by message, so v7's rows are one per log group (its latest line) and
    v6's one per distinct count: the latest row wins."""
    out: dict[str, RunnerCountLine] = {}
    for row in rows:
        fields = _fields(row.line)
        message = _message(fields)
        old = _CURRENT_V6.match(message)
        if old:
            line = RunnerCountLine(row.last_at, int(old[1]), int(old[2]))
        elif message == "Current runners":
            line = RunnerCountLine(row.last_at, _int(fields.get("currentRunners")), _int(fields.get("maximumRunners")))
        else:
            continue
        if row.log_group not in out or row.last_at > out[row.log_group].at:
            out[row.log_group] = line
    return out


def _latest_counts(rows: list[LogRow]) -> dict[str, tuple[int | None, int | None]]:
    """Per log group, the latest `Current runners` count read (both wordings)."""
    return {group: (line.current, line.maximum) for group, line in latest_counts(rows).items()}


def _said(fields: dict[str, Any]) -> list[_Said]:
    message = _message(fields)
    if "maximum number of runners reached" in message:
        return [_Said(LogCauseKind.MAX_REACHED)]
    if message.startswith("GitHub rate limit:"):
        return [_Said(LogCauseKind.RATE_LIMITED)]
    if message.startswith("Failed to create JIT config for some instances"):
        return [_Said(LogCauseKind.JIT_FAILED)]
    if message.startswith(_RETRY_DROPPED):
        return [_Said(LogCauseKind.RETRY_DROPPED, job_id=_job_id(fields))]
    if message.startswith("Create fleet request failed"):
        error = fields.get("error")
        code = _code(error) if isinstance(error, dict) else None
        retryable = fields.get("retryable")
        return [_Said(LogCauseKind.LAUNCH_FAILED, code, retryable if isinstance(retryable, bool) else None)]
    if message.startswith("Create fleet did not create every requested instance"):
        retried = _codes(fields.get("fleetErrorsTriggeringRetry"))
        dropped = _codes(fields.get("fleetErrorsNotTriggeringRetry"))
        return [_Said(LogCauseKind.LAUNCH_FAILED, code, True) for code in retried] + [
            _Said(LogCauseKind.LAUNCH_FAILED, code, False) for code in dropped
        ]
    if message.startswith("Create fleet failed, error not recognized as scaling error"):
        codes: list[str | None] = [*_codes(fields.get("data"))] or [None]
        return [_Said(LogCauseKind.LAUNCH_FAILED, code, False) for code in codes]
    if message.startswith("Create fleet failed, ScaleError will be thrown"):
        return [_Said(LogCauseKind.LAUNCH_FAILED, None, True)]
    return []


def _code(error: dict[str, Any]) -> str | None:
    for key in ("name", "code", "Code"):
        value = error.get(key)
        if isinstance(value, str) and value and value != "Error":
            return value
    return None


def _codes(errors: Any) -> list[str]:
    if not isinstance(errors, list):
        return []
    codes = [e.get("ErrorCode") for e in errors if isinstance(e, dict)]
    return sorted({c for c in codes if isinstance(c, str) and c})


def _job_id(fields: dict[str, Any]) -> int | None:
    """The job a line names: Powertools' nested `github.workflow_job_id`, its flattened name (as Logs Insights
    returns it), or a GitHub API path in the line."""
    github = fields.get("github")
    nested = github.get("workflow_job_id") if isinstance(github, dict) else None
    found = _int(nested if nested is not None else fields.get("github.workflow_job_id"))
    if found is not None:
        return found
    url = _JOB_IN_URL.search(json.dumps(fields))
    return int(url[1]) if url else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    return None


def _quoted(fields: dict[str, Any], line: str) -> str:
    """The line as quoted on a page: level, message and the fields that say why, never the stack."""
    kept = {k: v for k, v in fields.items() if k in _QUOTED_FIELDS}
    error = fields.get("error")
    if isinstance(error, dict):
        kept["error"] = {k: v for k, v in error.items() if k in ("name", "message", "code")}
    text = json.dumps(kept, separators=(",", ":"), ensure_ascii=False) if kept else line
    return text if len(text) <= MAX_QUOTED else text[: MAX_QUOTED - 3] + "..."


_QUOTED_FIELDS = (
    "level",
    "timestamp",
    "message",
    "function-name",
    "currentRunners",
    "maximumRunners",
    "desiredNewRunners",
    "retryable",
    "fleetErrorsNotTriggeringRetry",
    "fleetErrorsTriggeringRetry",
    "github",
    "github.workflow_job_id",
)


def _hhmm(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%H:%M")


def lead(log: AutoscalerLog | None) -> LogCause | None:
    """The cause a page leads with: the first of the likeliest kind found."""
    return log.causes[0] if log and log.causes else None
