"""The forecast's outlook: capacity's pool model projected from now, checked against capacity's own replay."""

from __future__ import annotations

import bisect
import random
import statistics
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from queuewatch.model.forecast.inputs import ForecastInputs
from queuewatch.model.forecast.launch import LaunchCeilings
from queuewatch.model.forecast.model import simulate
from queuewatch.model.forecast.outlook import NoOutlook, Outlook, Projection, fleet_launch_slope, outlook

NOW = datetime(2026, 11, 28, 12, tzinfo=UTC)
MINUTE = 60.0


def _outlook(inputs: ForecastInputs, waiting: int = 0, oldest: float | None = None, horizon: float = 600) -> Outlook:
    result = outlook(inputs, waiting=waiting, oldest_seconds=oldest, at=NOW, horizon_seconds=horizon)
    assert isinstance(result, Outlook), result
    return result


def _read_at(
    arrivals: Sequence[float], actual: Sequence[float], now: float, run: float, startup: float, maximum: int
) -> tuple[ForecastInputs, list[float]]:
    """What the collector reads at `now` of a history capacity replayed: the inputs, and the waiting jobs' ages."""
    starts = [a + w for a, w in zip(arrivals, actual, strict=True)]
    running = [now - s for s, a in zip(starts, arrivals, strict=True) if a <= now and s <= now < s + run]
    waiting = [now - a for a, s in zip(arrivals, starts, strict=True) if a <= now < s]
    window = 600
    inputs = ForecastInputs(
        window_seconds=window,
        arrived=sum(1 for a in arrivals if now - window < a <= now),
        run_seconds=run,
        startup_seconds=startup,
        running=len(running),
        running_seconds=statistics.median(running),
        runners=maximum,
        maximum=maximum,
        runners_from="log",
    )
    return inputs, waiting


def test_against_capacitys_replay_of_random_arrivals() -> None:
    """Twenty histories of random arrivals (6 a minute, where 100 slots serve 4.8), each replayed whole by
    capacity's model, and a forecast made two hours in from what the collector would read then: the next ten
    minutes' jobs wait what the forecast's range says (within a minute) for at least 80% of them."""
    run, startup, maximum, now = 20 * MINUTE, MINUTE, 100, 2 * 3600.0
    inside = total = 0
    for seed in range(20):
        rng = random.Random(seed)
        arrivals = [0.0]
        while arrivals[-1] < 3 * 3600:
            arrivals.append(arrivals[-1] + rng.expovariate(1 / 10))
        actual = simulate(arrivals, [run] * len(arrivals), maximum, startup)
        inputs, waiting = _read_at(arrivals, actual, now, run, startup, maximum)
        forecast = _outlook(inputs, waiting=len(waiting), oldest=max(waiting), horizon=600)
        for arrival, wait in zip(arrivals, actual, strict=True):
            if now < arrival <= now + 600:
                low, high = (_wait_at(p, arrival - now) for p in (forecast.low, forecast.high))
                inside += low - MINUTE <= wait <= high + MINUTE
                total += 1
    assert total > 1000
    assert inside / total >= 0.8


def _wait_at(projection: Projection, offset: float) -> float:
    index = min(bisect.bisect_left(projection.offsets, offset), len(projection.offsets) - 1)
    return projection.waits[index]


def test_against_capacitys_replay_of_a_steady_overload() -> None:
    """Evenly spaced arrivals replayed whole by capacity's model, and the forecast made mid-way from what the
    collector would read at that moment: the forecast's waits for the next ten minutes' jobs are capacity's,
    within a minute."""
    rate, run, startup, maximum = 1 / 10, 20 * MINUTE, MINUTE, 100  # 6 a minute; 100 slots serve 4.8 a minute
    arrivals = [k / rate for k in range(int(3 * 3600 * rate))]
    actual = simulate(arrivals, [run] * len(arrivals), maximum, startup)
    now = 2 * 3600.0
    inputs, waiting = _read_at(arrivals, actual, now, run, startup, maximum)
    forecast = _outlook(inputs, waiting=len(waiting), oldest=max(waiting), horizon=600)
    future = [(a - now, w) for a, w in zip(arrivals, actual, strict=True) if now < a <= now + 600]
    assert future
    for offset, wait in future:
        # the forecast's job queued nearest that moment
        index = min(range(len(forecast.central.offsets)), key=lambda i: abs(forecast.central.offsets[i] - offset))
        assert forecast.central.waits[index] == pytest.approx(wait, abs=MINUTE)
    assert forecast.full_in_seconds == 0.0  # every slot is taken already
    late = forecast.lateness(max(w for _, w in future) - 5 * MINUTE)
    assert late is not None and late.likely


def test_a_pool_with_headroom_fills_at_the_arrival_rate() -> None:
    """10 runners left and 2 jobs a minute, with runs far longer than the horizon: full in about 5 minutes."""
    inputs = ForecastInputs(
        window_seconds=600,
        arrived=20,
        run_seconds=3600,
        startup_seconds=30,
        running=40,
        running_seconds=60,
        runners=40,
        maximum=50,
        runners_from="log",
    )
    forecast = _outlook(inputs)
    assert forecast.headroom == 10
    assert forecast.full_in_seconds == pytest.approx(5 * MINUTE, abs=MINUTE)
    # the jobs after it wait for a running job to end: the first ends about 58 minutes on, at the even spread
    late = forecast.lateness(30 * MINUTE)
    assert late is not None
    assert late.queued_in_seconds == pytest.approx(5 * MINUTE, abs=MINUTE)
    assert late.crosses_in_seconds == pytest.approx(35 * MINUTE, abs=MINUTE)
    assert "20 jobs arrived in 10m, 10 runners left of 50, jobs run about 1h" in forecast.evidence()


def test_a_late_job_is_late_strictly_past_the_threshold() -> None:
    """As the rules judge: a wait equal to the threshold is not past it."""
    inputs = ForecastInputs(
        window_seconds=600, arrived=0, run_seconds=600, startup_seconds=120, running=0, runners=0, maximum=5
    )
    forecast = _outlook(inputs, waiting=1, oldest=60)  # starts at its start-up: a wait of 120 s
    assert forecast.lateness(120) is None
    late = forecast.lateness(119)
    assert late is not None and late.queued_in_seconds == -60 and late.wait_seconds == 120


def test_an_idle_pool_forecasts_nothing() -> None:
    inputs = ForecastInputs(window_seconds=600, arrived=0, run_seconds=600, running=0, runners=0, maximum=10)
    forecast = _outlook(inputs)
    assert forecast.full_in_seconds is None
    assert forecast.lateness(60) is None


def test_a_full_pool_is_full_now() -> None:
    inputs = ForecastInputs(window_seconds=600, arrived=0, run_seconds=600, running=10, runners=10, maximum=10)
    assert _outlook(inputs).full_in_seconds == 0.0


def test_the_range_brackets_the_central_forecast() -> None:
    """Fewer arrivals make the first late job later (or never); more make it sooner."""
    inputs = ForecastInputs(
        window_seconds=600,
        arrived=30,
        run_seconds=1800,
        startup_seconds=60,
        running=45,
        running_seconds=300,
        runners=45,
        maximum=50,
    )
    late = _outlook(inputs, horizon=1800).lateness(10 * MINUTE)
    assert late is not None
    assert late.earliest_in_seconds <= late.queued_in_seconds
    assert late.latest_in_seconds is None or late.latest_in_seconds >= late.queued_in_seconds


def test_a_window_without_arrivals_still_allows_some() -> None:
    """No arrivals in the window do not prove there will be none: the upper bound has one."""
    inputs = ForecastInputs(window_seconds=600, arrived=0, run_seconds=3600, running=10, runners=10, maximum=10)
    forecast = _outlook(inputs, horizon=1800)
    assert len(forecast.high.offsets) > 0 and len(forecast.central.offsets) == 0


@pytest.mark.parametrize(
    ("inputs", "reason"),
    [
        (ForecastInputs(window_seconds=600, arrived=3, run_seconds=600), "maximum"),
        (ForecastInputs(window_seconds=600, arrived=3, maximum=10), "run time is unknown"),
    ],
)
def test_no_outlook_says_what_was_not_read(inputs: ForecastInputs, reason: str) -> None:
    result = outlook(inputs, waiting=0, oldest_seconds=None, at=NOW, horizon_seconds=600)
    assert isinstance(result, NoOutlook) and reason in result.reason


def test_the_launch_ceilings_add_a_growing_wait_once_the_fleet_asks_faster() -> None:
    ceilings = LaunchCeilings()  # one App: 166 a minute sustained
    assert fleet_launch_slope([100 / 60], ceilings) == 0.0
    slope = fleet_launch_slope([332 / 60], ceilings)
    assert slope == pytest.approx(1.0)  # twice the rate: each second from now adds a second of wait
    inputs = ForecastInputs(window_seconds=600, arrived=60, run_seconds=60, running=0, runners=0, maximum=1000)
    slow = outlook(inputs, waiting=0, oldest_seconds=None, at=NOW, horizon_seconds=600, launch_slope=slope)
    assert isinstance(slow, Outlook)
    late = slow.lateness(5 * MINUTE)
    assert late is not None and late.queued_in_seconds == pytest.approx(5 * MINUTE, abs=MINUTE)
    assert _outlook(inputs).lateness(5 * MINUTE) is None


@given(
    arrived=st.integers(0, 60),
    running=st.integers(0, 40),
    maximum=st.integers(1, 80),
    waiting=st.integers(0, 20),
    oldest=st.floats(0, 3600),
    startup=st.floats(0, 600),
    slope=st.sampled_from([0.0, 0.5]),
)
def test_every_projection_is_capacitys_model(
    arrived: int, running: int, maximum: int, waiting: int, oldest: float, startup: float, slope: float
) -> None:
    """A projection's waits are simulate's for the same jobs, whether or not it took the short cut for a pool
    with a slot for every job."""
    inputs = ForecastInputs(
        window_seconds=600,
        arrived=arrived,
        run_seconds=900,
        startup_seconds=startup,
        running=min(running, maximum),
        running_seconds=300,
        runners=min(running, maximum),
        maximum=maximum,
    )
    result = outlook(inputs, waiting=waiting, oldest_seconds=oldest, at=NOW, horizon_seconds=1800, launch_slope=slope)
    assert isinstance(result, Outlook)
    for projection in (result.central, result.low, result.high):
        offsets = list(projection.offsets)
        busy = min(running, maximum)
        busy_until = [max(0.0, 900 - 2 * 300 * (k + 0.5) / busy) for k in range(busy)]
        launch = [slope * max(o, 0.0) for o in offsets] if slope else None
        expected = simulate(offsets, [900.0] * len(offsets), maximum, startup, launch, busy_until, not_before=0.0)
        assert list(projection.waits) == pytest.approx(list(expected))
