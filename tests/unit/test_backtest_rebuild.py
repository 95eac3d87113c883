"""The jobs' history rebuilt as the collector's ticks: queue size and oldest wait per runner type."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from job_records import job_record

from queuewatch.collect.queues import WatchedQueue
from queuewatch.config.load import parse_config
from queuewatch.model.jobs import JobRecord
from queuewatch.model.signals import SignalName
from queuewatch_cli.commands.backtest.jobs import JobObservations, job_spans

T = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
CONFIG = parse_config(
    "version: 1\ndefaults: {region: us-east-1}\n"
    "runner_types: [{name: small, queue: {name: q-small}}, {name: large, queue: {name: q-large}}]\n"
    "rules: [{name: r, team: ci-infra, match: ['*'], thresholds: {queue_time: 1m}}]\n",
    source="t.yaml",
)
TARGETS = [
    WatchedQueue(name, "us-east-1", "1", f"q-{name}", None, CONFIG.signals_for({})) for name in ("small", "large")
]


def job(n: int, runner_type: str | None, queued: int, started: int | None, **more: Any) -> JobRecord:
    """A job queued `queued` minutes after T, started `started` minutes after T (None: not yet)."""
    status = more.pop("status", "queued" if started is None else "in_progress")
    queued_at = more.pop("queued_at", None if status == "waiting" else T + timedelta(minutes=queued))
    return job_record(
        n,
        runner_type,
        queued_at,
        status=status,
        started_at=None if started is None else T + timedelta(minutes=started),
        labels=(),
        created_at=T + timedelta(minutes=queued),
        run_id=1,
        updated_at=T,
        expires_at=T + timedelta(days=14),
        **more,
    )


def figures(jobs: list[JobRecord], minutes: int, start: int = 0) -> list[dict[str, tuple[float, float]]]:
    spans = job_spans(jobs, TARGETS)
    ticks = JobObservations(CONFIG, TARGETS, [], spans).ticks(
        T + timedelta(minutes=start), T + timedelta(minutes=start + minutes)
    )
    return [
        {
            rt.name: (rt.value(SignalName.QUEUE_SIZE) or 0.0, rt.value(SignalName.QUEUE_TIME) or 0.0)
            for rt in snapshot.runner_types
            if rt.value(SignalName.QUEUE_SIZE)
        }
        for snapshot in ticks
    ]


def test_each_tick_counts_the_jobs_queued_and_the_oldest_wait() -> None:
    jobs = [
        job(1, "small", 1, 4),  # queued at minute 1, taken at 4
        job(2, "small", 2, 3),
        job(3, "large", 2, None),  # still queued when the history was read
        job(4, "small", 3, 10, status="completed", completed_at=T + timedelta(minutes=12)),
    ]
    ticks = figures(jobs, 5)
    assert ticks[0] == {}
    assert ticks[1] == {"small": (1, 0)}
    assert ticks[2] == {"small": (2, 60), "large": (1, 0)}
    assert ticks[3] == {"small": (2, 120), "large": (1, 60)}  # job 2 taken at minute 3, job 4 queued
    assert ticks[4] == {"small": (1, 60), "large": (1, 120)}  # the oldest now is job 4
    assert ticks[5] == {"small": (1, 120), "large": (1, 180)}


def test_a_job_cancelled_while_queued_waits_until_it_was_cancelled_and_one_in_approval_never_waits() -> None:
    cancelled = job(1, "small", 0, None, status="completed", completed_at=T + timedelta(minutes=2))
    approval = job(2, "small", 0, None, status="waiting")
    assert figures([cancelled, approval], 3) == [{"small": (1, 0)}, {"small": (1, 60)}, {}, {}]


def test_a_job_that_waited_for_approval_waits_for_a_runner_from_when_it_was_approved() -> None:
    approved = job(1, "small", 0, 32, queued_at=T + timedelta(minutes=30))
    ticks = figures([approved], 3, start=29)
    assert ticks == [{}, {"small": (1, 0)}, {"small": (1, 60)}, {}]


def test_jobs_queued_before_the_range_count_from_when_they_were_queued_until_githubs_limit() -> None:
    early = job(1, "large", -30, 10)
    lost = job(2, "small", -24 * 60 - 5, None)  # GitHub's 24-hour limit passed before the range: lost
    ticks = figures([early, lost], 2)
    assert ticks == [{"large": (1, 1800)}, {"large": (1, 1860)}, {"large": (1, 1920)}]


def test_jobs_no_runner_type_serves_are_counted_apart() -> None:
    spans = job_spans([job(1, "gpu", 0, 1), job(2, None, 0, 1), job(3, "small", 0, 1)], TARGETS)
    assert (spans.jobs, spans.unmatched, len(spans)) == (3, 2, 1)


def test_the_plot_under_compare_names_each_config_and_draws_both_thresholds_and_an_empty_range_says_no_data() -> None:
    from queuewatch_cli.commands.backtest.plot import Timeline
    from queuewatch_cli.commands.backtest.replay import Replay

    other = parse_config(
        "version: 1\ndefaults: {region: us-east-1}\nrunner_types: [{name: small, queue: {name: q-small}}]\n"
        "rules: [{name: slow, team: ci-infra, match: ['*'], thresholds: {queue_time: 20m}}]\n",
        source="b.yaml",
    )
    timelines = []
    for config, label in ((CONFIG, "a.yaml"), (other, "b.yaml")):
        timeline = Timeline(config, T, T + timedelta(minutes=10), label)
        replay = Replay(config)
        replay.on_tick = timeline.record
        for snapshot in JobObservations(config, TARGETS, [], job_spans([job(1, "small", 0, 8)], TARGETS)).ticks(
            T, T + timedelta(minutes=10)
        ):
            replay.tick(snapshot, snapshot.collected_at)
        timeline.close_spans(replay.episodes)
        timelines.append(timeline)
    figure = timelines[0].figure(timelines[1])
    [axes] = figure.axes
    texts = [t.get_text() for t in axes.texts]
    assert "A: r: queue time > 1m" in texts and "B: slow: queue time > 20m" in texts
    levels = sorted(float(line.get_ydata()[0]) for line in axes.lines if str(line.get_label()).startswith("_"))  # type: ignore[index,arg-type]
    assert levels == [1, 20]  # each config's threshold, in minutes
    # A and B on the plot; the files named once, in the footnote, never in the title, legend or labels
    assert axes.get_title().endswith(": A against B") and "yaml" not in axes.get_title()
    assert [t.get_text() for t in figure.texts] == ["A: a.yaml   B: b.yaml"]
    assert not [text for text in texts if "yaml" in text]
    legend = axes.get_legend()
    assert legend is not None and "A: firing" in [t.get_text() for t in legend.get_texts()]
    assert not [t.get_text() for t in legend.get_texts() if "yaml" in t.get_text()]

    [empty] = Timeline(CONFIG, T, T + timedelta(minutes=10), "a.yaml").figure().axes
    assert "no data" in [t.get_text() for t in empty.texts] and empty.get_legend() is None
