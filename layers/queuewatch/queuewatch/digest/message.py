"""One team's weekly SLO digest as one SNS message (pure): a chat body (AWS Chatbot's custom notification) and a
readable e-mail body, in SNS's per-protocol JSON, cut to fit SNS's 256 KB whatever the fleet and the SLOs."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from queuewatch.alerting.slo_summary import SloSummary, lines
from queuewatch.base.subjects import sns_subject
from queuewatch.notifications.chat import CHAT_DESCRIPTION_LIMIT
from queuewatch.notifications.text import cut

MESSAGE_LIMIT = 262_144  # bytes: SNS's limit on a whole message, every protocol's body together
FIRED_LISTED = 20  # alerts a digest lists per SLO; the rest are counted


@dataclass(frozen=True)
class Fired:
    page_at: datetime
    priority: str
    subject: str
    rule: str  # slo:<name> (a page) or slo:<name>:ticket


@dataclass(frozen=True)
class SloWeek:
    summary: SloSummary  # over the SLO's window, its spenders over the week
    fired: tuple[Fired, ...]  # the SLO's alerts that went out in the week, oldest first, one per page


@dataclass(frozen=True)
class TeamDigest:
    team: str
    subject: str  # as SNS takes it
    message: str  # SNS's MessageStructure=json: {"default": chat, "email": text}
    slos: int


def week_lines(week: SloWeek, days: int) -> list[str]:
    """`queuewatch slo`'s lines for the SLO, then the alerts of the week."""
    out = lines(week.summary)
    if week.summary.spent_by_runner_type:
        out.append(f"  (the runner types and hours named: late jobs of the last {days} days)")
    else:
        out.append(f"  no late jobs in the last {days} days")
    if not week.fired:
        out.append(f"  alerts in the last {days} days: none")
        return out
    out.append(f"  alerts in the last {days} days: {len(week.fired)}")
    for entry in week.fired[:FIRED_LISTED]:
        out.append(f"    {entry.page_at:%Y-%m-%d %H:%M}Z {entry.priority} {entry.subject}")
    if len(week.fired) > FIRED_LISTED:
        out.append(f"    and {len(week.fired) - FIRED_LISTED} more")
    return out


def team_digest(team: str, weeks: Sequence[SloWeek], now: datetime, span: timedelta, stack: str) -> TeamDigest:
    days = round(span.total_seconds() / 86400)
    title = f"queuewatch {stack}: SLO digest for {team}, {days} days to {now:%Y-%m-%d %H:%M} UTC"
    fired = sum(len(w.fired) for w in weeks)
    low = min((w.summary.budget_left_fraction for w in weeks), default=1.0)
    headline = f"{len(weeks)} SLOs; lowest budget left {low * 100:.0f}%; {fired} alerts in the last {days} days"
    body = [headline, ""]
    for week in weeks:
        body += [*week_lines(week, days), ""]
    text = "\n".join(body).rstrip() + "\n"
    chat = {
        "version": "1.0",
        "source": "custom",
        "id": f"slo-digest-{team}-{now:%Y%m%dT%H%M}",
        "content": {
            "textType": "client-markdown",
            "title": f":bar_chart: {title}",
            "description": "```\n"
            + cut(text, CHAT_DESCRIPTION_LIMIT - len("```\n\n```"))
            + "\n```",  # fenced, cut or not
            "keywords": ["slo-digest", team],
        },
        "metadata": {"summary": title, "eventType": "queuewatch.slo_digest", "additionalContext": {"team": team}},
    }
    message = fitted(chat, f"{title}\n\n{text}")
    return TeamDigest(team=team, subject=sns_subject(title), message=message, slos=len(weeks))


def fitted(chat: Mapping[str, object], email: str) -> str:
    """The per-protocol message, its e-mail body cut until the whole is under MESSAGE_LIMIT bytes (the chat body
    is bounded already by its description's limit)."""
    keep = len(email)
    while True:
        body = email if keep >= len(email) else cut(email, keep) + "\n(cut to fit SNS's message size)\n"
        message = json.dumps({"default": json.dumps(chat), "email": body})
        size = len(message.encode("utf-8"))
        if size <= MESSAGE_LIMIT:
            return message
        keep = max(0, int(keep * MESSAGE_LIMIT / size) - 1_000)
