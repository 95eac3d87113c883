"""Forecast inputs the tests share: the issue's filling pool, which its jobs will queue in."""

from queuewatch.model.forecast.inputs import ForecastInputs

FILLING = ForecastInputs(
    window_seconds=600,
    arrived=42,
    run_seconds=2400,
    startup_seconds=60,
    running=47,
    running_seconds=60,  # its running jobs started recently: none frees a slot for about 40 minutes
    runners=47,
    maximum=50,
    runners_from="log",
)
"""42 jobs in 10 minutes, 3 runners left of 50, jobs that run 40 minutes: its next jobs will wait past 30m."""
