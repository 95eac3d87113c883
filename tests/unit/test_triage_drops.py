"""A drop is a drop: tracked jobs waiting past a runner's boot beyond every request the autoscaler still holds
for them (build queue, job-retry checks, dead-lettered requests; each job counted once) are named as dropped,
with their repository and run; younger jobs, and jobs whose requests sit in an unread queue, never are."""

from __future__ import annotations

from datetime import timedelta

from support import T0, level, runner_type, with_signals

from queuewatch.alerting.triage import Finding, fleet_dropped, held_by_copies, triage
from queuewatch.model.snapshot import Reading, RunnerTypeSnapshot, WaitingJob

WINDOW, BASELINE = 900, 10800
JOBS = [WaitingJob(repo="acme/api", created_at=T0 - timedelta(minutes=20 - i), run_id=9000 + i) for i in range(5)]


def tracked(jobs: int, past_boot: int, requests: float, **paths: Reading) -> RunnerTypeSnapshot:
    rt = with_signals(
        runner_type("linux-x64", jobs, 1200),
        jobs_queued=level(jobs),
        oldest_job_age=level(1200),
        scale_up_requests=level(requests),
        **paths,
    )
    return rt.model_copy(update={"jobs_past_boot": past_boot, "oldest_jobs": JOBS[:jobs]})


def dropped(rt: RunnerTypeSnapshot, fleet: float | None = None) -> Finding | None:
    findings = triage(rt, window=WINDOW, baseline=BASELINE, fleet_dropped=fleet).findings
    return next((f for f in findings if f.cause == "no_scale_up_request"), None)


def test_jobs_past_boot_with_no_request_are_named_dropped_with_their_runs_first() -> None:
    finding = dropped(tracked(jobs=3, past_boot=3, requests=1))
    assert finding is not None
    assert finding.title == "Scale-up requests dropped, their jobs still queued"
    assert "the scale-up requests of 2 jobs were dropped" in finding.detail
    assert "the longest waiting: acme/api run 9000, acme/api run 9001" in finding.detail
    assert "took other jobs" not in finding.detail
    assert finding.evidence["requests_dropped"] == 2


def test_a_job_younger_than_a_runners_boot_is_never_called_dropped() -> None:
    assert dropped(tracked(jobs=3, past_boot=1, requests=1)) is None  # two young jobs: a runner may be booting


def test_a_job_retry_check_or_a_dead_lettered_request_holds_its_job_once() -> None:
    held = tracked(jobs=3, past_boot=3, requests=0, job_retry_checks=level(2), dead_lettered=level(1))
    assert dropped(held) is None
    one_short = tracked(jobs=3, past_boot=3, requests=0, job_retry_checks=level(1), dead_lettered=level(1))
    finding = dropped(one_short)
    assert finding is not None and "the scale-up requests of 1 job were dropped" in finding.detail
    assert "its job-retry queue 1 check, its dead-letter queue 1 request" in finding.detail


def test_an_unread_path_makes_no_claim() -> None:
    unread = tracked(jobs=3, past_boot=3, requests=0, job_retry_checks=Reading.missing("AccessDenied"))
    assert dropped(unread) is None


def test_under_all_dispatch_the_fleets_bound_is_counted_and_no_job_is_named() -> None:
    # Two runner types share a job's requests: linux-x64's job has its request in gpu's queue.
    linux = tracked(jobs=2, past_boot=2, requests=0)
    gpu = tracked(jobs=0, past_boot=0, requests=2)
    assert fleet_dropped([linux, gpu]) == 0
    assert dropped(linux, fleet=fleet_dropped([linux, gpu])) is None
    bound = fleet_dropped([linux, tracked(jobs=0, past_boot=0, requests=1)])
    finding = dropped(linux, fleet=bound)
    assert finding is not None and "the scale-up requests of at least 1 of the fleet's jobs were dropped" in (
        finding.detail
    )
    assert "acme/api" not in finding.detail


def test_untracked_runner_types_make_no_claim() -> None:
    assert dropped(with_signals(runner_type("linux-x64", 3, 1200), scale_up_requests=level(0))) is None


def test_a_request_in_a_copy_of_the_key_elsewhere_holds_its_job() -> None:
    # Jobs are routed to the key (linux-x64); a copy in another region (linux-x64@us-west-2) holds one request.
    linux = tracked(jobs=2, past_boot=2, requests=0)
    copy = runner_type("linux-x64@us-west-2", 1, 600)  # a copy gets no jobs: its queue size is its requests
    copies = held_by_copies([linux, copy])
    assert copies == {"linux-x64": 1}
    finding = dropped_with(linux, copies["linux-x64"])
    assert finding is not None and "the scale-up requests of 1 job were dropped" in finding.detail
    assert "its copies in other regions or accounts 1 request" in finding.detail
    unread = runner_type("linux-x64@us-west-2", None, 600, missing="throttled")
    assert held_by_copies([linux, unread]) == {"linux-x64": None}
    assert dropped_with(linux, None) is None  # a request in the unread copy cannot be told from a drop


def dropped_with(rt: RunnerTypeSnapshot, copies: float | None) -> Finding | None:
    findings = triage(rt, window=WINDOW, baseline=BASELINE, held_by_copies=copies).findings
    return next((f for f in findings if f.cause == "no_scale_up_request"), None)


def test_under_all_dispatch_a_copys_requests_count_for_the_fleet() -> None:
    linux = tracked(jobs=2, past_boot=2, requests=0)
    assert fleet_dropped([linux, runner_type("linux-x64@us-west-2", 2, 600)]) == 0
    assert fleet_dropped([linux, runner_type("linux-x64@us-west-2", None, 600)]) is None


def test_a_runner_type_with_no_build_queue_is_no_drop_and_leaves_the_fleets_count_alone() -> None:
    judged = with_signals(runner_type("lane", 2, 1200), jobs_queued=level(2), oldest_job_age=level(1200))
    lane = judged.model_copy(update={"queue_name": "", "jobs_past_boot": 2})
    assert dropped(lane) is None
    assert fleet_dropped([lane, tracked(jobs=1, past_boot=1, requests=0)]) == 1
