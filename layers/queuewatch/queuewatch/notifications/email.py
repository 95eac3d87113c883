"""The e-mail body: a readable page with the table of runner types, the triage, the links and the silence."""

from __future__ import annotations

from datetime import datetime

from queuewatch.alerting.alert import Alert, RunnerTypeFigures
from queuewatch.base.durations import format_duration
from queuewatch.base.wording import plural


def email_text(alert: Alert) -> str:
    said = " (forecast)" if alert.forecast else " (did not happen)" if alert.did_not_happen else ""
    lines = [f"{alert.alarm_state}{said}: {alert.title}"]
    since = _when(alert.started_at)
    if alert.status == "resolved":
        until = _when(alert.resolved_at or alert.evaluated_at)
        lines.append(f"Priority {alert.priority} ({alert.severity}), team {alert.team}. Fired from {since} to {until}.")
    else:
        lines.append(f"Priority {alert.priority} ({alert.severity}), team {alert.team}. Firing since {since}.")
    lines += ["", alert.summary]
    if alert.likely_cause:
        lines += ["", f"Likely cause: {alert.likely_cause}"]
    lines += ["", *_table(alert.runner_types)]
    if alert.runner_types_affected > len(alert.runner_types):
        lines.append(f"... and {plural(alert.runner_types_affected - len(alert.runner_types), 'more runner type')}")
    triaged = [f for f in alert.runner_types if f.triage is not None]
    if triaged:
        first = triaged[0].triage
        assert first is not None
        window, baseline = format_duration(first.window_seconds), format_duration(first.baseline_seconds)
        lines += ["", f"Triage (the last {window}, against the {baseline} before), likely cause first"]
        # What no configured signal shows is usually the same for every runner type: say it once.
        shared = set.intersection(*(set(f.triage.not_checked) for f in triaged if f.triage))
        for figures in triaged:
            lines += _triage_lines(figures, shared)
        if shared:
            # One line: a fleet that cannot publish these signals reads it on every page.
            causes = [item.split(":", 1)[0] for item in first.not_checked if item in shared]
            lines.append(
                f"Not checked, for want of a signal: {'; '.join(causes)} (the JSON alert's triage.not_checked "
                "names the signals each needs)"
            )
    waiting = [f for f in alert.runner_types if f.oldest_jobs]
    if waiting:
        lines += ["", "Jobs waiting longest (GitHub's own records)"]
        for figures in waiting:
            lines.append(figures.runner_type)
            for job in figures.oldest_jobs:
                waited = format_duration((alert.evaluated_at - job.created_at).total_seconds())
                lines.append(f"  {job.repo}, queued {waited}: {job.url or 'no link'}")
    lines += ["", "Links"]
    if alert.view_url:
        lines.append(f"  View:       {alert.view_url}")
    if alert.runbook_url:
        lines.append(f"  Runbook:    {alert.runbook_url}")
    if alert.dashboard_url:
        lines.append(f"  Dashboard:  {alert.dashboard_url}")
    for figures in alert.runner_types:
        if figures.console_url:
            lines.append(f"  {figures.runner_type} queue metrics: {figures.console_url}")
    if alert.status == "firing":
        lines += ["", "Silence it", f"  {alert.silence.command}"]
        planned = alert.silence.next_window
        if planned is not None:
            lines.append(f"  The next maintenance window that holds it back: {planned.name}, {planned.local}")
    if alert.blind_spots:
        lines += ["", f"Not seen here: {alert.blind_spots}."]
    lines += [
        "",
        f"Alert {alert.dedup_key}, notification {alert.sequence} ({alert.page}), "
        f"evaluated {_when(alert.evaluated_at)}.",
    ]
    return "\n".join(lines) + "\n"


def _table(figures: list[RunnerTypeFigures]) -> list[str]:
    header = ("Runner type", "Region", "Queued", "Oldest", "Busy/total", "Likely cause")
    rows = [header]
    for f in figures:
        busy, total = f.signals.get("busy_runners"), f.signals.get("total_runners")
        runners = f"{busy:g}/{total:g}" if busy is not None and total is not None else "-"
        cause = f.triage.findings[0].title if f.triage and f.triage.findings else "-"
        rows.append(
            (
                f.runner_type,
                f.place,
                "no data" if f.queue_size is None else f"{f.queue_size:g}",
                "no data" if f.queue_time_seconds is None else format_duration(f.queue_time_seconds),
                runners,
                cause if f.status == "firing" else "recovered",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    right = {2, 3, 4}
    out = []
    for index, row in enumerate(rows):
        cells = [cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(row)]
        out.append("  ".join(cells).rstrip())
        if index == 0:
            out.append("  ".join("-" * w for w in widths))
    return out


def _triage_lines(figures: RunnerTypeFigures, shared: set[str]) -> list[str]:
    triage = figures.triage
    assert triage is not None
    lines = [figures.runner_type]
    if not triage.findings:
        lines.append("  No cause found in the configured signals.")
    for number, finding in enumerate(triage.findings, start=1):
        step = f". {finding.next_step}" if finding.next_step else ""
        lines.append(f"  {number}. {finding.title}: {finding.detail}{step}")
    for item in triage.not_checked:
        if item not in shared:
            lines.append(f"  Not checked: {item}")
    return lines


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")
