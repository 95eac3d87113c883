"""Under `all` dispatch, which runner types' requests may stand for a job tracked under another: those whose label
sets admit a job in common with a runner type that has jobs tracked queued (the upstream webhook puts a job's
request in every queue whose labels take it), checked against a brute-force oracle over every possible job."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, combinations

from hypothesis import given
from hypothesis import strategies as st
from support import runner_type

from queuewatch.config.load import parse_config
from queuewatch.evaluate.blindness import shared_requests
from queuewatch.model.signals import SignalName
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot

LABELS = ("self-hosted", "linux", "x64", "gpu", "arm64")


def with_jobs(name: str, jobs: int) -> RunnerTypeSnapshot:
    found = runner_type(name, 1, 60)
    return found.model_copy(update={"signals": {**found.signals, SignalName.JOBS_QUEUED: Reading.of(jobs)}})


def config_of(strategy: str, specs: Sequence[tuple[str, tuple[str, ...] | None, bool]]) -> str:
    lines = []
    for name, labels, exact in specs:
        said = "" if labels is None else f", labels: [{', '.join(labels)}]" + (", exact_match: true" if exact else "")
        lines.append(f"  - {{name: {name}, queue: {{name: q-{name}}}{said}}}")
    return (
        f"version: 1\ndefaults: {{region: us-east-1, queue_selection_strategy: {strategy}, rule: {{team: t}}}}\n"
        "runner_types:\n" + "\n".join(lines) + "\nrules:\n  - {name: r, thresholds: {queue_size: 0}}\n"
    )


def takes(labels: tuple[str, ...], exact: bool, job: frozenset[str]) -> bool:
    wanted = frozenset(labels)
    return job == wanted if exact else job <= wanted


def test_a_gpu_pool_with_exact_labels_shares_no_job_with_the_x64_pools() -> None:
    specs = [("cpu", ("self-hosted", "linux", "x64"), False), ("gpu", ("self-hosted", "linux", "gpu"), True)]
    config = parse_config(config_of("all", specs), source="t.yaml")
    assert shared_requests(config, [with_jobs("cpu", 1), with_jobs("gpu", 0)]) == frozenset()


def test_wide_pools_that_share_a_label_may_share_a_job() -> None:
    specs = [("cpu", ("self-hosted", "linux", "x64"), False), ("gpu", ("self-hosted", "linux", "gpu"), False)]
    config = parse_config(config_of("all", specs), source="t.yaml")
    assert shared_requests(config, [with_jobs("cpu", 1), with_jobs("gpu", 0)]) == {"gpu"}


def test_a_pool_matched_by_name_may_share_anyones_job_and_first_dispatch_shares_none() -> None:
    specs = [("cpu", None, False), ("gpu", ("self-hosted", "linux", "gpu"), True)]
    observed = [with_jobs("cpu", 1), with_jobs("gpu", 0)]
    assert shared_requests(parse_config(config_of("all", specs), source="t.yaml"), observed) == {"gpu"}
    assert shared_requests(parse_config(config_of("first", specs), source="t.yaml"), observed) == frozenset()


def test_a_keys_copy_in_another_region_shares_its_keys_jobs() -> None:
    specs = [("cpu", ("x64",), True)]
    config = parse_config(config_of("all", specs), source="t.yaml")
    copy = with_jobs("cpu", 0).model_copy(update={"name": "cpu@eu-west-1", "region": "eu-west-1"})
    assert shared_requests(config, [with_jobs("cpu", 2), copy]) == {"cpu@eu-west-1"}


label_sets = st.tuples(st.sets(st.sampled_from(LABELS), min_size=1).map(lambda s: tuple(sorted(s))), st.booleans())


@given(st.lists(st.tuples(label_sets, st.integers(0, 2)), min_size=1, max_size=6))
def test_shared_exactly_when_some_job_could_go_to_both(pools: list[tuple[tuple[tuple[str, ...], bool], int]]) -> None:
    """The indexes agree with trying every job the labels can make."""
    specs = [(f"p{i}", labels, exact) for i, ((labels, exact), _) in enumerate(pools)]
    config = parse_config(config_of("all", specs), source="t.yaml")
    observed = [with_jobs(f"p{i}", jobs) for i, (_, jobs) in enumerate(pools)]
    every_job = [frozenset(c) for c in chain.from_iterable(combinations(LABELS, n) for n in range(1, len(LABELS) + 1))]
    holders = [(labels, exact) for (labels, exact), jobs in pools if jobs]
    expected = {
        f"p{i}"
        for i, ((labels, exact), jobs) in enumerate(pools)
        if jobs == 0
        and any(takes(labels, exact, job) and any(takes(h, e, job) for h, e in holders) for job in every_job)
    }
    assert shared_requests(config, observed) == expected
