"""The autoscaler's resources, named from its prefix as the upstream terraform-aws-github-runner names them.

Read from its terraform (v6 and v7 alike):
- the bus: `<prefix>-runners` (modules/webhook/eventbridge, on by default);
- the runners of a key: the multi-runner module hands each key the prefix `<prefix>-<key>`
  (modules/multi-runner/runners.tf); the single-runner module hands its one set of runners `<prefix>` itself;
- a Lambda of the runners module is `<runners prefix>-<name>` and logs to `/aws/lambda/<function>`:
  `scale-up` (modules/runners/scale-up.tf), `job-retry` (modules/runners/job-retry, through modules/lambda);
- the build queue: `<prefix>-<key>-queued-builds` (multi-runner) or `<prefix>-queued-builds` (single-runner);
  its job-retry and dead-letter queues beside it (demand_paths.py);
- the webhook's matcher config in SSM: `/<ssm root>/<prefix>/<webhook>/runner-matcher-config`, split into
  `...-0`, `...-1`, ... when its JSON outgrows one parameter (modules/webhook/webhook.tf); the root is
  `github-action-runners` and the webhook's part `webhook` unless `ssm_paths` says otherwise.

Pure: names in, names out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Layout = Literal["multi-runner", "single-runner"]
"""Which upstream module runs the fleet: one set of runners per key, or one set in all."""

SSM_ROOT = "github-action-runners"
SSM_WEBHOOK = "webhook"
MATCHER_PARAMETER = "runner-matcher-config"


QUEUE_ONLY_BLIND = (
    "queue-only (no job tracking): the autoscaler's queues cannot show requests its scale-up deletes at "
    "runners_maximum_count (non-ephemeral runners), launches failing with an error it does not retry (the request "
    "deleted), or job-retry checks dropped on an error: each leaves no message to count, so these pages stay "
    "silent while jobs wait at GitHub. Deploy with AutoscalerPrefix=<prefix> to track GitHub's waiting jobs from "
    "its bus"
)
"""What a stack without job tracking cannot see, said once wherever that mode is in force."""


def bus_name(prefix: str) -> str:
    """The autoscaler's EventBridge bus, which carries GitHub's workflow_job events."""
    return f"{prefix}-runners"


def runners_prefix(prefix: str, key: str | None, layout: Layout) -> str:
    """The prefix upstream gives a runner type's own resources (its Lambdas, its queues)."""
    if layout == "single-runner" or not key:
        return prefix
    return f"{prefix}-{key}"


def build_queue(prefix: str, key: str | None, layout: Layout) -> str:
    """The runner type's build queue, as the module names it."""
    return f"{runners_prefix(prefix, key, layout)}-queued-builds"


@dataclass(frozen=True)
class LogGroups:
    """The log groups of a runner type's scale-up and job-retry Lambdas."""

    scale_up: str
    job_retry: str


def log_groups(prefix: str, key: str | None, layout: Layout = "multi-runner") -> LogGroups:
    """Where a runner type's scale-up and job-retry Lambdas write: `/aws/lambda/<prefix>-<key>-scale-up` under
    the multi-runner module, `/aws/lambda/<prefix>-scale-up` under the single-runner one (the key ignored)."""
    base = runners_prefix(prefix, key, layout)
    return LogGroups(scale_up=f"/aws/lambda/{base}-scale-up", job_retry=f"/aws/lambda/{base}-job-retry")


def matcher_config_path(prefix: str, ssm_root: str = SSM_ROOT, webhook: str = SSM_WEBHOOK) -> str:
    """The matcher config's parameter when it fits in one; the chunks, when split, add `-0`, `-1`, ...."""
    return f"/{ssm_root.strip('/')}/{prefix}/{webhook.strip('/')}/{MATCHER_PARAMETER}"


def matcher_config_chunks(path: str, count: int) -> list[str]:
    """The names of a matcher config split into `count` parameters, in the order their texts join."""
    return [f"{path}-{index}" for index in range(count)]
