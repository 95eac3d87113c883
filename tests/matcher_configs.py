"""Realistic matcher configs, written as the upstream webhook module writes them to SSM
(modules/webhook/webhook.tf): a JSON list sorted by `%03d-<key>` of (priority, key), each entry with the
queue's URL and ARN, its key and its matcherConfig; split into chunks when long."""

from __future__ import annotations

import json
from typing import Any

ACCOUNT = "123456789012"
DEFAULT_PRIORITY = 999  # modules/multi-runner/variables.tf


def entry(
    prefix: str,
    key: str,
    label_matchers: list[list[str]],
    *,
    exact: bool,
    priority: int = DEFAULT_PRIORITY,
    region: str = "eu-west-1",
    fifo: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    queue = f"{prefix}-{key}-queued-builds{'.fifo' if fifo else ''}"
    return {
        "id": f"https://sqs.{region}.amazonaws.com/{ACCOUNT}/{queue}",
        "arn": f"arn:aws:sqs:{region}:{ACCOUNT}:{queue}",
        "key": key,
        "matcherConfig": {"labelMatchers": label_matchers, "exactMatch": exact, "priority": priority, **extra},
    }


def written(entries: list[dict[str, Any]]) -> str:
    """The JSON the module writes: sorted by zero-padded priority, then key."""
    order = sorted(entries, key=lambda e: f"{e['matcherConfig']['priority']:03d}-{e['key']}")
    return json.dumps(order, separators=(",", ":"))


def chunks(text: str, count: int) -> list[str]:
    size = -(-len(text) // count)
    return [text[i : i + size] for i in range(0, len(text), size)]


def upstream_multi_runner(prefix: str = "multi-runner", region: str = "eu-west-1") -> list[dict[str, Any]]:
    """examples/multi-runner/templates/runner-configs at v7.11.0: the keys are the files' names."""
    ubuntu_2204 = [["self-hosted", "linux", "x64", "ubuntu-2204"]]
    return [
        entry(prefix, "linux-arm64", [["self-hosted", "linux", "arm64", "amazon"]], exact=True, region=region),
        entry(prefix, "linux-x64-ubuntu-2204", ubuntu_2204, exact=True, region=region),
        entry(
            prefix,
            "linux-x64-ubuntu",
            [["self-hosted", "linux", "x64", "ubuntu-latest"], ["self-hosted", "linux", "x64", "ubuntu-2404"]],
            exact=True,
            region=region,
        ),
        entry(prefix, "linux-x64", [["self-hosted", "linux", "x64", "amazon"]], exact=False, priority=1, region=region),
        entry(prefix, "windows-x64", [["self-hosted", "windows", "x64", "servercore-2022"]], exact=True, region=region),
    ]


def pytorch_like(prefix: str = "pt", region: str = "us-east-1") -> list[dict[str, Any]]:
    """A fleet keyed apart from its labels: `linux-x64-gpu-a100` serves `[self-hosted, linux, x64, gpu-a100]`."""
    gpu = ["a100", "h100", "t4", "l4"]
    entries = [
        entry(prefix, f"linux-x64-gpu-{g}", [["self-hosted", "linux", "x64", f"gpu-{g}"]], exact=True, region=region)
        for g in gpu
    ]
    cpu = [["self-hosted", "linux", "x64", "linux.2xlarge"]]
    arm = [["self-hosted", "linux", "arm64", "linux.arm64.2xlarge"]]
    entries += [
        entry(prefix, "linux-x64-cpu-2xlarge", cpu, exact=True, region=region),
        entry(prefix, "linux-arm64-cpu", arm, exact=True, region=region),
    ]
    return entries
