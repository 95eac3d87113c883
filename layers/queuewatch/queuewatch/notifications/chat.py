"""AWS Chatbot's custom notification, for the chat topic: every page of one alert threads under its dedup key."""

from __future__ import annotations

from queuewatch.alerting.alert import Alert
from queuewatch.notifications.text import cut

CHAT_DESCRIPTION_LIMIT = 8_000  # characters: a chat message longer than a screen is not read
CHAT_LISTED = 10  # runner types a chat message lists


def chat_notification(alert: Alert) -> dict[str, object]:
    """AWS Chatbot's custom notification; every page of one alert threads under its dedup key."""
    firing = alert.status == "firing"
    icon = ":crystal_ball:" if alert.forecast else ":rotating_light:" if firing else ":white_check_mark:"
    # A predictive page, and a forecast that fell back, say so in the title the channel shows first.
    said = " (forecast)" if alert.forecast else " (did not happen)" if alert.did_not_happen else ""
    lines = [alert.summary]
    if alert.likely_cause:
        lines += ["", f"*Likely cause:* {alert.likely_cause}"]
    lines.append("")
    for figures in alert.runner_types[:CHAT_LISTED]:
        where = "" if figures.label == figures.runner_type else f" ({figures.place})"
        line = f"• `{figures.runner_type}`{where}: {figures.queue_text()}"
        if firing and figures.triage and figures.triage.findings:
            finding = figures.triage.findings[0]
            line += f": {finding.title}: {finding.detail}"
        lines.append(line)
    more = alert.runner_types_affected - min(len(alert.runner_types), CHAT_LISTED)
    if more > 0:
        lines.append(f"• and {more} more")
    links = [f"[View]({alert.view_url})"] if alert.view_url else []
    if alert.runbook_url:
        links.append(f"[Runbook]({alert.runbook_url})")
    if alert.dashboard_url:
        links.append(f"[Dashboard]({alert.dashboard_url})")
    if links:
        lines += ["", " | ".join(links)]
    if alert.blind_spots:
        lines += ["", f"_Not seen here: {alert.blind_spots}._"]
    next_steps = []
    if firing:
        if alert.runbook_url:
            next_steps.append(f"Follow the runbook: {alert.runbook_url}")
        worst = alert.runner_types[0]
        if worst.triage and worst.triage.findings:
            finding = worst.triage.findings[0]
            next_steps.append(f"Start with {worst.runner_type}: {finding.title}. {finding.next_step}".rstrip(". "))
        next_steps.append(f"Silence it: `{alert.silence.command}`")
        planned = alert.silence.next_window
        if planned is not None:
            next_steps.append(f"Or wait for maintenance window {planned.name}: {planned.local}")
    return {
        "version": "1.0",
        "source": "custom",
        "id": alert.notification_id,
        "content": {
            "textType": "client-markdown",
            "title": f"{icon} {alert.alarm_state} {alert.priority}{said}: {alert.title}",
            "description": cut("\n".join(lines), CHAT_DESCRIPTION_LIMIT),
            "nextSteps": next_steps,
            "keywords": [alert.priority, alert.severity, alert.team, alert.rule],
        },
        "metadata": {
            "threadId": alert.dedup_key,
            "summary": alert.subject,
            "eventType": f"queuewatch.{alert.status}",
            "relatedResources": [f.console_url for f in alert.runner_types[:CHAT_LISTED] if f.console_url],
            "additionalContext": {
                "dedup_key": alert.dedup_key,
                "notification_id": alert.notification_id,
                "priority": alert.priority,
                "team": alert.team,
                "rule": alert.rule,
                "page": alert.page,
            },
        },
    }
