"""The SLOs' alerts as instances the plan already knows how to handle (pure).

Each SLO is two rules the state machine sees like any other (dedup, grouping, silences, resolve):
`slo:<name>`, whose instances are its paging pairs (`fast`, `slow`, ...) and `ceiling`, at the SLO's
priority; and `slo:<name>:ticket`, whose instances are its ticket pairs, at its ticket priority, sent to
the chat topic only (delivery.py). No rule name can hold ':', so neither clashes with a configured rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from queuewatch.base.durations import format_duration
from queuewatch.config import Config
from queuewatch.model.rules import SLO_RULE_PREFIX, TICKET_SUFFIX, Rule, Verdict, alert_kind
from queuewatch.model.slo import Counts, PairVerdict, Slo, judge_pair
from queuewatch.model.snapshot import SloReading, Snapshot

PREFIX = SLO_RULE_PREFIX
CEILING = "ceiling"
DEFAULT_REPEAT = 14400


def page_rule_name(slo: str) -> str:
    return f"{PREFIX}{slo}"


def ticket_rule_name(slo: str) -> str:
    return f"{PREFIX}{slo}{TICKET_SUFFIX}"


def is_slo_rule(name: str) -> bool:
    return name.startswith(PREFIX)


def is_ticket(rule_name: str) -> bool:
    return alert_kind(rule_name) == "ticket"


def slo_rules(config: Config) -> dict[str, Rule]:
    """Each SLO's page rule and, if it has ticket pairs, its ticket rule."""
    repeat = config.defaults.rule.repeat_interval or DEFAULT_REPEAT
    rules: dict[str, Rule] = {}
    for slo in config.resolved_slos:
        for name, priority in ((page_rule_name(slo.name), slo.priority), (ticket_rule_name(slo.name), None)):
            if priority is None and not any(a.notify == "ticket" for a in slo.burn_alerts):
                continue
            rules[name] = Rule(
                name=name,
                match=("*",),
                exclude=(),
                queue_time_threshold=slo.queue_time_under,
                queue_size_threshold=None,
                breach_when="any",
                pending_for=0,
                keep_firing_for=0,
                repeat_interval=repeat,
                priority=priority or slo.ticket_priority,
                team=slo.team,
                runbook_url=slo.runbook_url,
                dashboard_url=None,
                group_by="all",
            )
    return rules


@dataclass(frozen=True)
class SloJudgement:
    """One SLO instance's verdict this tick, and the words its page gives."""

    rule: str
    instance: str
    verdict: Verdict
    finding: str


def judge_slos(config: Config, snapshot: Snapshot) -> tuple[list[SloJudgement], dict[str, str]]:
    """Every configured SLO's instances on the snapshot's readings, and the SLOs that could not be judged
    (by name, with why: the monitor page names them, and their alerts hold)."""
    readings = {r.name: r for r in snapshot.slos}
    judged: list[SloJudgement] = []
    blind: dict[str, str] = {}
    for slo in config.resolved_slos:
        reading = readings.get(slo.name)
        if reading is None or reading.error is not None:
            why = reading.error if reading and reading.error else "not read: job tracking or the SLO table is off"
            blind[slo.name] = why or "not read"
        judged += _judge(slo, reading if reading is not None and reading.error is None else None)
    return judged, blind


def _judge(slo: Slo, reading: SloReading | None) -> list[SloJudgement]:
    out: list[SloJudgement] = []
    for alert in slo.burn_alerts:
        rule = ticket_rule_name(slo.name) if alert.notify == "ticket" else page_rule_name(slo.name)
        if reading is None:
            out.append(SloJudgement(rule, alert.name, Verdict(breached=None), ""))
            continue
        pair = judge_pair(slo, alert, _counts(reading, alert.long_window), _counts(reading, alert.short_window))
        out.append(
            SloJudgement(
                rule,
                alert.name,
                Verdict(breached=pair.firing, breached_signals=("queue_time",) if pair.firing else ()),  # what burns
                pair_text(pair),
            )
        )
    if slo.page_when_waiting_over is not None:
        rule = page_rule_name(slo.name)
        if reading is None:
            out.append(SloJudgement(rule, CEILING, Verdict(breached=None), ""))
        else:
            oldest = reading.oldest_waiting_seconds or 0.0
            over = oldest > slo.page_when_waiting_over
            text = (
                f"ceiling: a job has waited {format_duration(oldest)}, over "
                f"{format_duration(slo.page_when_waiting_over)}"
            )
            out.append(
                SloJudgement(
                    rule,
                    CEILING,
                    Verdict(breached=over, breached_signals=("queue_time",) if over else (), queue_time=oldest),
                    text,
                )
            )
    return out


def _counts(reading: SloReading, seconds: int) -> Counts:
    window = reading.window(seconds)
    return Counts(window.good, window.bad) if window else Counts()


def pair_text(pair: PairVerdict) -> str:
    """`fast: burn 20.0 over 1h (412 jobs, 83 late) and 18.0 over 5m (14 jobs, 3 late); fires at 14.4`."""
    alert = pair.alert
    long, short = format_duration(alert.long_window), format_duration(alert.short_window)
    text = (
        f"{alert.name}: burn {pair.long_burn:.1f} over {long} ({pair.long.total} jobs, {pair.long.bad} late) "
        f"and {pair.short_burn:.1f} over {short} ({pair.short.total} jobs, {pair.short.bad} late); "
        f"fires at {alert.factor:g}"
    )
    return text if pair.enough_jobs else f"{text}; {pair.long.total} jobs in {long} are too few to fire"
