"""The names a config may use: AWS regions and accounts, queues, runner types, rules, statistics."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

from queuewatch.base.globs import glob_problem
from queuewatch.model import snapshot

REGION = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-\d$")
QUEUE_NAME = re.compile(r"^(?=.{1,80}$)[A-Za-z0-9_-]+(\.fifo)?$")
QUEUE_URL = re.compile(r"^https?://[A-Za-z0-9.-]+(:\d+)?/(?P<account>\d{12})/(?P<name>[^/]+)$")
SQS_HOST_REGION = re.compile(r"^https?://sqs\.(?P<region>[a-z0-9-]+)\.amazonaws\.com")
RUNNER_TYPE = snapshot.RUNNER_TYPE  # a key, as the config names it; a snapshot also takes a copy's `key@region`
RULE_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
STAT = re.compile(r"^(SampleCount|Average|Sum|Minimum|Maximum|p\d{1,2}(\.\d+)?|tm\d{1,2}|IQM)$")
ACCOUNT = re.compile(r"^\d{12}$")


def _check_region(value: str) -> str:
    if not REGION.match(value):
        meant = _region_meant(value)
        hint = f"; did you mean {meant!r}?" if meant else ","
        raise ValueError(f"found {value!r}{hint} expected an AWS region such as us-east-1")
    return value


def _region_meant(value: str) -> str | None:
    """The region a near miss stands for: a hyphen left out or doubled, capitals, spaces (`us-west2`)."""
    parts = re.fullmatch(r"([a-z]{2}(?:-gov|-iso[a-z]*)?)[-_ ]*([a-z]+?)[-_ ]*(\d)", value.strip().lower())
    meant = f"{parts[1]}-{parts[2]}-{parts[3]}" if parts else None
    return meant if meant and meant != value and REGION.match(meant) else None


def _check_account(value: str) -> str:
    if not ACCOUNT.match(value):
        raise ValueError(f"found {value!r}, expected a 12-digit AWS account id")
    return value


Region = Annotated[str, AfterValidator(_check_region)]
AccountId = Annotated[str, AfterValidator(_check_account)]


def _check_glob(value: str) -> str:
    problem = glob_problem(value)
    if problem:
        raise ValueError(problem)
    return value


RunnerTypeGlob = Annotated[str, AfterValidator(_check_glob)]
"""A runner type name or glob that some runner type name can match (queuewatch.base.globs)."""
