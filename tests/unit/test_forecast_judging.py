"""A rule's forecast on top of its plain verdict (evaluate/forecasts.py): what it may turn into a breach, what it
never touches, and which horizon a runner type's outlook spans."""

from __future__ import annotations

from dataclasses import replace

import pytest
from support import T0, runner_type

from queuewatch.evaluate.forecasts import horizons, outlooks, with_forecast
from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.forecast.launch import LaunchCeilings
from queuewatch.model.forecast.outlook import NoOutlook, Outlook
from queuewatch.model.rules import Priority, Rule, judge

RULE = Rule(
    name="jobs-queueing",
    match=("linux*",),
    exclude=(),
    queue_time_threshold=1800,
    queue_size_threshold=None,
    breach_when="all",
    pending_for=0,
    keep_firing_for=0,
    repeat_interval=3600,
    priority=Priority.P2,
    team="ci-infra",
    runbook_url=None,
    dashboard_url=None,
    group_by="all",
    forecast_horizon=600,
)
FILLING = ForecastInputs(
    window_seconds=600, arrived=42, run_seconds=2400, running=47, running_seconds=60, runners=47, maximum=50
)
CALM = ForecastInputs(window_seconds=600, arrived=1, run_seconds=600, maximum=50)


def judged(rule: Rule, inputs: ForecastInputs | None, queue_time: float | None = 0) -> tuple[bool | None, bool]:
    found = runner_type("linux-x64", 0, queue_time)  # the jobs waiting read: the forecast can be made
    found = found.model_copy(update={"forecast": inputs})
    verdict = with_forecast(rule, judge(rule, found), outlooks([rule], [found], T0, LaunchCeilings()), found.name)
    return verdict.breached, verdict.forecast is not None


def test_a_known_clear_with_a_late_job_within_the_horizon_breaches_as_a_forecast() -> None:
    assert judged(RULE, FILLING) == (True, True)


def test_a_late_job_past_the_rules_horizon_does_not_page() -> None:
    # 27 runners left at 4.2 jobs a minute: the first late job is queued about 6.5 minutes from now, which a
    # 10-minute forecast reaches and a 5-minute one does not.
    later = FILLING.model_copy(update={"running": 23, "runners": 23, "run_seconds": 3000})
    assert judged(RULE, later) == (True, True)
    assert judged(replace(RULE, forecast_horizon=300), later) == (False, False)


def test_a_quiet_pool_stays_clear() -> None:
    assert judged(RULE, CALM) == (False, False)


def test_a_plain_breach_stands_and_is_not_marked_a_forecast() -> None:
    assert judged(RULE, FILLING, queue_time=1900) == (True, False)
    assert judged(RULE, CALM, queue_time=1900) == (True, False)


@pytest.mark.parametrize("inputs", [FILLING, CALM])
def test_an_unread_queue_stays_open_whatever_the_forecast(inputs: ForecastInputs) -> None:
    assert judged(RULE, inputs, queue_time=None) == (None, False)


def test_a_rule_without_a_forecast_or_a_runner_type_without_inputs_is_judged_plainly() -> None:
    assert judged(replace(RULE, forecast_horizon=None), FILLING) == (False, False)
    assert judged(RULE, None) == (False, False)
    assert judged(RULE, FILLING.model_copy(update={"maximum": None})) == (False, False)


def test_a_runner_type_is_projected_over_the_largest_horizon_of_the_rules_selecting_it() -> None:
    other = replace(RULE, name="stuck", forecast_horizon=1800, match=("linux-x64",))
    plain = replace(RULE, name="plain", forecast_horizon=None, match=("*",))
    found = [runner_type("linux-x64"), runner_type("linux-arm"), runner_type("gpu")]
    assert horizons([RULE, other, plain], found) == {"linux-x64": 1800, "linux-arm": 600}


def test_each_outlook_says_why_where_it_has_none() -> None:
    found = [
        runner_type("linux-x64").model_copy(update={"forecast": FILLING}),
        runner_type("linux-arm"),  # no inputs read this tick
        runner_type("linux-old", None, None).model_copy(update={"forecast": FILLING}),  # its waiting jobs unread
    ]
    seen = outlooks([RULE], found, T0, LaunchCeilings())
    assert isinstance(seen["linux-x64"], Outlook)
    assert seen["linux-arm"] == NoOutlook("its forecast inputs were not read this tick")
    assert seen["linux-old"] == NoOutlook("the jobs waiting for it now were not read")


def test_the_fleets_arrivals_past_the_launch_ceilings_make_a_pool_late_sooner() -> None:
    """The launch slope comes from every forecast runner type's arrivals: a fleet asking faster than the
    ceilings launch adds to each pool's waits."""
    rule = replace(RULE, match=("*",), queue_time_threshold=300)
    roomy = ForecastInputs(window_seconds=600, arrived=60, run_seconds=600, maximum=1000)
    alone = outlooks([rule], [runner_type("a").model_copy(update={"forecast": roomy})], T0, LaunchCeilings())
    busy = ForecastInputs(window_seconds=60, arrived=20_000, run_seconds=600, maximum=100_000)
    fleet = [
        runner_type("a").model_copy(update={"forecast": roomy}),
        runner_type("b").model_copy(update={"forecast": busy}),
    ]
    crowded = outlooks([rule], fleet, T0, LaunchCeilings())
    assert isinstance(alone["a"], Outlook) and isinstance(crowded["a"], Outlook)
    assert alone["a"].lateness(300) is None
    assert crowded["a"].lateness(300) is not None
