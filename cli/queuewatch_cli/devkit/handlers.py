"""Run the real Lambda handlers in this process, with the events Lambda would send them.

Used by the demo, the tests and the benchmark, from a checkout; never by the deployed functions.
"""

from __future__ import annotations

import importlib.util
import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType
from typing import Any

from queuewatch_cli.common.checkout import PACKAGE_DIR, checkout_root

# From a clone only (the deployed functions never load a handler this way); installed, beside the package, where
# nothing it reads is found.
REPO_ROOT = checkout_root() or PACKAGE_DIR.parent
EVENTS_DIR = REPO_ROOT / "events"
ACCOUNT_ID = "123456789012"  # moto's default account


def load_handler_module(stage: str) -> ModuleType:
    """functions/<stage>/app.py as a module of its own name, as Lambda would import it."""
    path = REPO_ROOT / "functions" / stage / "app.py"
    spec = importlib.util.spec_from_file_location(f"queuewatch_function_{stage}", path)
    if spec is None or spec.loader is None:
        raise FileNotFoundError(f"no handler at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass
class FakeContext:
    """The parts of LambdaContext that Powertools and the handlers read."""

    function_name: str
    memory_limit_in_mb: int = 256
    aws_request_id: str = ""
    region: str = "us-east-1"

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{self.region}:{ACCOUNT_ID}:function:{self.function_name}"

    @property
    def function_version(self) -> str:
        return "$LATEST"

    def get_remaining_time_in_millis(self) -> int:
        return 60_000


def load_event(name: str) -> dict[str, Any]:
    return json.loads((EVENTS_DIR / name).read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def scheduled_event(at: datetime, region: str = "us-east-1") -> dict[str, Any]:
    """The EventBridge scheduled event, as events/collect_scheduled.json, at a chosen time."""
    event = load_event("collect_scheduled.json")
    event.update(id=str(uuid.uuid4()), time=at.isoformat().replace("+00:00", "Z"), region=region, account=ACCOUNT_ID)
    event["resources"] = [f"arn:aws:events:{region}:{ACCOUNT_ID}:rule/queuewatch-CollectSchedule"]
    return event


def destination_record(
    request_payload: dict[str, Any],
    response_payload: Any,
    *,
    at: datetime,
    succeeded: bool = True,
    region: str = "us-east-1",
) -> dict[str, Any]:
    """The record Lambda sends an asynchronous invocation's destination, for success or failure."""
    record = load_event("evaluate_success.json" if succeeded else "evaluate_failure.json")
    record["timestamp"] = at.isoformat().replace("+00:00", "Z")
    record["requestContext"]["requestId"] = str(uuid.uuid4())
    record["requestContext"]["functionArn"] = (
        f"arn:aws:lambda:{region}:{ACCOUNT_ID}:function:queuewatch-collect:$LATEST"
    )
    record["requestPayload"] = request_payload
    record["responsePayload"] = response_payload
    return record


def arrives_when_made(evaluate_module: ModuleType, record: dict[str, Any]) -> None:
    """Local runs on a simulated or recorded timeline: the evaluate handler's wall clock reads the moment
    its destination record was made, as in AWS where it arrives seconds after its tick. The evaluator
    refuses observations far from its clock, so a replayed events/ file would otherwise be refused."""
    made = datetime.fromisoformat(record["timestamp"])
    setattr(evaluate_module, "clock", lambda: made)  # noqa: B010 - the handler module's own global
