"""The digest stage: each team's SLOs over the week, read as `queuewatch slo` reads them (the SLO counters, the
jobs queued now and the jobs' history) with the SLO alerts the sent log holds, published to the chat topic."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from queuewatch.adapters.jobs_table.jobs import queued_jobs, read_history
from queuewatch.adapters.slo_table.counters import read_tally
from queuewatch.adapters.sns import publish
from queuewatch.adapters.state_table.sent_log import SENT, SentEntry, read_entries
from queuewatch.alerting.slo_summary import longest_window, spenders, summarize
from queuewatch.base.errors import QueuewatchError
from queuewatch.config import Config
from queuewatch.digest.message import Fired, SloWeek, TeamDigest, team_digest
from queuewatch.evaluate.slo import page_rule_name, ticket_rule_name

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sns import SNSClient

SPAN = timedelta(days=7)
TOP = 5  # runner types and hours named per SLO


class DigestError(QueuewatchError):
    """A team's digest could not be published; the others were."""


@dataclass(frozen=True)
class DigestTables:
    slo_table: str
    jobs_table: str
    state_table: str  # its sent log: the alerts that went out


def fired_alerts(entries: list[SentEntry], slo: str) -> tuple[Fired, ...]:
    """The SLO's pages and tickets that went out (new ones, not repeats or resolves), once each whatever the
    topics they went to."""
    rules = {page_rule_name(slo), ticket_rule_name(slo)}
    seen: set[str] = set()
    fired = []
    for entry in entries:
        if entry.rule in rules and entry.kind == "new" and entry.outcome == SENT and entry.notification_id not in seen:
            seen.add(entry.notification_id)
            fired.append(Fired(entry.page_at, entry.priority, entry.subject, entry.rule))
    return tuple(sorted(fired, key=lambda f: f.page_at))


def build_digests(
    dynamodb: DynamoDBClient, config: Config, tables: DigestTables, now: datetime, stack: str
) -> list[TeamDigest]:
    """One digest per team that owns an SLO, teams in name order."""
    slos = config.resolved_slos
    if not slos:
        return []
    queued = list(queued_jobs(dynamodb, tables.jobs_table))
    history = list(read_history(dynamodb, tables.jobs_table, now - SPAN, now, queued_now=queued))
    entries = read_entries(dynamodb, tables.state_table, now - SPAN, now)
    by_team: dict[str, list[SloWeek]] = defaultdict(list)
    for slo in slos:
        counted = read_tally(dynamodb, tables.slo_table, slo.name, longest_window(slo), now)
        summary = summarize(slo, config, counted, queued, now)
        since = max(now - SPAN, now - timedelta(seconds=slo.window))
        by_type, by_hour = spenders(slo, config, history, now, since, TOP)
        summary = replace(summary, spent_by_runner_type=by_type, spent_by_hour=by_hour)
        by_team[slo.team].append(SloWeek(summary, fired_alerts(entries, slo.name)))
    return [team_digest(team, by_team[team], now, SPAN, stack) for team in sorted(by_team)]


def send_digests(
    dynamodb: DynamoDBClient,
    sns: SNSClient,
    topic_arn: str,
    config: Config,
    tables: DigestTables,
    now: datetime,
    stack: str,
) -> list[str]:
    """Publish each team's digest; the teams sent. A refused publish does not stop the other teams: it is raised
    once they are tried (the schedule does not retry, so no team gets its digest twice)."""
    sent, failed = [], []
    for digest in build_digests(dynamodb, config, tables, now, stack):
        try:
            publish(
                sns,
                topic_arn,
                subject=digest.subject,
                message=digest.message,
                attributes={"team": digest.team, "status": "digest"},
                message_structure="json",
            )
        except (ClientError, BotoCoreError) as error:  # one team's refusal: the others still go
            failed.append(f"{digest.team}: {error}")
            continue
        sent.append(digest.team)
    if failed:
        raise DigestError(f"SLO digest not published for {len(failed)} team(s): " + "; ".join(failed))
    return sent
