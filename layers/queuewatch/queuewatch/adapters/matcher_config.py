"""The upstream webhook's matcher config, read from SSM Parameter Store (GetParameters, 10 names a call).

Named as the webhook's PARAMETER_RUNNER_MATCHER_CONFIG_PATH names it (one or more parameters joined by ':',
their values joined in that order), or from the prefix's default path (autoscaler.py), where the module
writes one parameter, or `-0`, `-1`, ... once the JSON outgrows one: the base and the first chunks are asked
for in one call, so the usual config costs one request. Anything unread or malformed raises
MatcherConfigError naming the parameter: the caller reports it, never guesses instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from queuewatch.adapters.aws.errors import describe
from queuewatch.model.autoscaler import matcher_config_chunks
from queuewatch.model.matcher import MatcherConfig, MatcherConfigError, parse

if TYPE_CHECKING:
    from mypy_boto3_ssm import SSMClient

BATCH = 10  # GetParameters' most names a call
MOST_CHUNKS = 100  # far past any fleet: 5,000 runner types' worst-case JSON is under 400 KB, 50 Advanced chunks


def _values(ssm: SSMClient, names: Sequence[str], said: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for start in range(0, len(names), BATCH):
        batch = list(names[start : start + BATCH])
        try:
            answer = ssm.get_parameters(Names=batch)
        except Exception as error:  # noqa: BLE001 - any failure is the same degraded reading, with its reason
            raise MatcherConfigError(f"{said}: not read: {describe(error)}") from None
        found.update({p["Name"]: p["Value"] for p in answer.get("Parameters", []) if "Name" in p and "Value" in p})
    return found


def read_named(ssm: SSMClient, names: Sequence[str]) -> MatcherConfig:
    """The matcher config from exactly these parameters, in order; any one missing is an error naming it."""
    if not names:
        raise MatcherConfigError("no matcher config parameter named")
    found = _values(ssm, names, names[0] if len(names) == 1 else f"{names[0]} and {len(names) - 1} more")
    missing = [name for name in names if name not in found]
    if missing:
        raise MatcherConfigError(f"{', '.join(missing)}: parameter not found")
    return parse([(name, found[name]) for name in names])


def read_default(ssm: SSMClient, path: str) -> MatcherConfig:
    """The matcher config at the module's path: the one parameter, or its chunks `-0`, `-1`, ... in order."""
    first = [path, *matcher_config_chunks(path, BATCH - 1)]
    found = _values(ssm, first, path)
    if path in found:
        return parse([(path, found[path])])
    chunks = matcher_config_chunks(path, MOST_CHUNKS)
    present = [name for name in chunks[: BATCH - 1] if name in found]
    # All the first chunks there: the config may have more; read on, a call per BATCH names, until one is missing.
    start = BATCH - 1
    while len(present) == start and start < MOST_CHUNKS:
        more = _values(ssm, chunks[start : start + BATCH], path)
        present += [name for name in chunks[start : start + BATCH] if name in more]
        found.update(more)
        start += BATCH
    count = next((i for i, name in enumerate(chunks) if name not in found), len(chunks))
    if count == 0:
        raise MatcherConfigError(f"{path}: parameter not found (nor {path}-0)")
    return parse([(name, found[name]) for name in chunks[:count]])
