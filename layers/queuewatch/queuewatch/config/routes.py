"""Receivers and routes: who gets which alert, written once in the config.

A receiver is a pager (an https endpoint), an e-mail address, an SQS queue, or the stack's chat topic. A route
sends the alerts of some teams, at a priority or higher, of some kinds (page, ticket, monitor) to a receiver.
Each route is one SNS filter policy on the message attributes every alert carries (`kind`, `priority`, `team`):
`make build` writes them as the receivers' subscriptions, the evaluator asks the same policies whether the
chat topic gets an alert, and `queuewatch routes test` evaluates them. One source, so the three agree.

A route's priority is a floor ("P2": P0, P1 and P2), never a set with holes: a resolve carries the priority of
its episode's page, so a route that took any page of the episode takes its resolve too (docs/alerts.md).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, model_validator

from queuewatch.base.frozen import FrozenModel
from queuewatch.config.names import RULE_NAME
from queuewatch.model.rules import ALERT_KINDS, AlertKind, Priority

PAGER_URL = re.compile(r"^https://\S+$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
QUEUE_ARN = re.compile(r"^arn:aws[a-z-]*:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,80}(\.fifo)?$")
PRIORITIES: tuple[Priority, ...] = tuple(Priority)
DEFAULT_KINDS: tuple[AlertKind, ...] = ("page", "monitor")
# SNS: a filter policy's values multiplied across its keys (and summed over $or) may make at most 150 combinations.
SNS_POLICY_COMBINATIONS = 150

FilterPolicy = dict[str, Any]


class Receiver(FrozenModel):
    """One place alerts go: exactly one of `pager`, `email`, `sqs` or `chat`."""

    name: str = Field(description="lower-case letters, digits and '-'; routes name it")
    pager: str | None = Field(default=None, description="an https endpoint, such as a PagerDuty or Opsgenie URL")
    email: str | None = Field(default=None, description="an e-mail address (SNS sends a confirmation first)")
    sqs: str | None = Field(default=None, description="an SQS queue's ARN; its policy must let the topic send")
    chat: bool = Field(default=False, description="true: the stack's chat topic, which AWS Chatbot reads")

    @model_validator(mode="after")
    def _one_endpoint(self) -> Receiver:
        if not RULE_NAME.match(self.name):
            raise ValueError(f"name: found {self.name!r}, expected lower-case letters, digits and '-'")
        given = [key for key in ("pager", "email", "sqs") if getattr(self, key) is not None] + (
            ["chat"] if self.chat else []
        )
        if len(given) != 1:
            found = f"found {' and '.join(given)}" if given else "found none"
            raise ValueError(f"receiver {self.name!r}: {found}, expected exactly one of pager, email, sqs, chat")
        checks = {
            "pager": (PAGER_URL, "an https:// URL"),
            "email": (EMAIL, "an e-mail address such as oncall@example.com"),
            "sqs": (QUEUE_ARN, "a queue ARN such as arn:aws:sqs:us-east-1:123456789012:pages"),
        }
        for key, (pattern, expected) in checks.items():
            value = getattr(self, key)
            if value is not None and not pattern.match(value):
                raise ValueError(f"receiver {self.name!r}.{key}: found {value!r}, expected {expected}")
        return self

    @property
    def protocol(self) -> str:
        """The SNS subscription protocol: https, email, sqs; chat has none (the evaluator publishes to it)."""
        return "https" if self.pager else "email" if self.email else "sqs" if self.sqs else "chat"

    @property
    def endpoint(self) -> str:
        return self.pager or self.email or self.sqs or "the chat topic"

    @property
    def described(self) -> str:
        """What it is, in words: `pager https://...`, `email a@b`, `sqs arn:...`, `the chat topic`."""
        medium = "pager" if self.pager else "email" if self.email else "sqs" if self.sqs else ""
        return f"{medium} {self.endpoint}".strip()


class RouteSpec(FrozenModel):
    """Sends the alerts it selects to one receiver; each key left out selects every value."""

    receiver: str
    teams: list[str] = Field(default_factory=list, description="the alert's team is one of these; none: any team")
    priority: Priority | None = Field(default=None, description="this priority or higher (P0 is highest); none: any")
    kinds: list[AlertKind] = Field(
        default_factory=lambda: list(DEFAULT_KINDS),
        min_length=1,
        description="page, ticket, monitor; by default page and monitor: a ticket goes only where a route names it",
    )

    @property
    def priorities(self) -> tuple[Priority, ...]:
        """The priorities it takes: the floor and every higher one."""
        if self.priority is None:
            return PRIORITIES
        return PRIORITIES[: PRIORITIES.index(self.priority) + 1]

    @property
    def filter_policy(self) -> FilterPolicy:
        """The SNS filter policy: the keys it narrows, each a list of exact values."""
        policy: FilterPolicy = {"kind": [kind for kind in ALERT_KINDS if kind in self.kinds]}
        if self.priority is not None:
            policy["priority"] = [p.value for p in self.priorities]
        if self.teams:
            policy["team"] = sorted(set(self.teams))
        return policy


def combinations(policy: FilterPolicy) -> int:
    """How SNS counts a policy against its limit: the product of each key's values, summed over $or."""
    if "$or" in policy:
        return sum(combinations(part) for part in policy["$or"])
    count = 1
    for values in policy.values():
        count *= len(values)
    return count


def policy_matches(policy: FilterPolicy, attributes: dict[str, str | list[str]]) -> bool:
    """SNS's reading of the policies this module writes: every key matches, a list attribute on any item."""
    if "$or" in policy:
        return any(policy_matches(part, attributes) for part in policy["$or"])
    for key, values in policy.items():
        value = attributes.get(key)
        items = value if isinstance(value, list) else [] if value is None else [value]
        if not any(item in values for item in items):
            return False
    return True


def logical_id(receiver: str) -> str:
    """The receiver's name as a CloudFormation logical id part: gpu-pager -> GpuPager."""
    return "".join(part[:1].upper() + part[1:] for part in receiver.split("-"))


class Routing(FrozenModel):
    """The config's receivers and routes, checked against each other."""

    receivers: list[Receiver]
    routes: list[RouteSpec]

    @model_validator(mode="after")
    def _consistent(self) -> Routing:
        names = [receiver.name for receiver in self.receivers]
        for name in set(names):
            if names.count(name) > 1:
                raise ValueError(f"receivers: {name!r} is named twice; expected unique names")
        if sum(receiver.chat for receiver in self.receivers) > 1:
            raise ValueError("receivers: more than one chat receiver; the stack has one chat topic")
        camel = [logical_id(name) for name in names]
        for index, route in enumerate(self.routes):
            if route.receiver not in names:
                raise ValueError(
                    f"routes[{index}].receiver: found {route.receiver!r}, expected one of: {', '.join(names)}"
                )
        for receiver in self.receivers:
            if not self.routes_to(receiver.name):
                raise ValueError(
                    f"receivers: {receiver.name!r} has no route, so it would get nothing; "
                    f"add - {{receiver: {receiver.name}}} under routes, or remove it"
                )
            count = combinations(self.filter_policy(receiver.name))
            if count > SNS_POLICY_COMBINATIONS:
                raise ValueError(
                    f"routes to {receiver.name!r}: their filter policy makes {count} combinations of team, "
                    f"priority and kind, over SNS's {SNS_POLICY_COMBINATIONS}; list fewer teams, or route a "
                    "priority or kinds on fewer routes"
                )
        if len(set(camel)) != len(camel):
            raise ValueError("receivers: two names make one resource name (a-1b and a1b); expected names that differ")
        return self

    def routes_to(self, receiver: str) -> list[RouteSpec]:
        return [route for route in self.routes if route.receiver == receiver]

    def filter_policy(self, receiver: str) -> FilterPolicy:
        """The receiver's subscription filter policy: its one route's, or each of its routes' under $or."""
        policies = [route.filter_policy for route in self.routes_to(receiver)]
        return policies[0] if len(policies) == 1 else {"$or": policies}

    def destinations(self, attributes: dict[str, str | list[str]]) -> list[Receiver]:
        """The receivers an alert with these message attributes reaches, in the config's order."""
        return [r for r in self.receivers if policy_matches(self.filter_policy(r.name), attributes)]

    def reaches_chat(self, attributes: dict[str, str | list[str]]) -> bool:
        return any(receiver.chat for receiver in self.destinations(attributes))


DEFAULT_ROUTING = Routing(
    receivers=[Receiver(name="chat", chat=True)],
    routes=[RouteSpec(receiver="chat", kinds=list(ALERT_KINDS))],
)
"""Without receivers in the config: every alert, tickets included, to the stack's chat topic, and no pager."""
