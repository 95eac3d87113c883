"""Delivering pages: the outbox written before publishing, one publish per topic, retries next tick.

A page is first written into its group's outbox (conditionally), then published,
then cleared. A topic that refuses keeps the page pending for it alone, so the next
tick re-publishes there and not where it was accepted. A failed publish is never
recorded as sent.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING

from queuewatch.adapters.aws.errors import describe
from queuewatch.adapters.aws.item_size import ITEM_LIMIT
from queuewatch.adapters.sns import publish
from queuewatch.adapters.state_table.alerts import WriteConflict, delete_group, group_item_size, put_group
from queuewatch.adapters.state_table.sent_log import FAILED, SENT, SentEntry, put_entry
from queuewatch.alerting.alert import Alert
from queuewatch.alerting.alert_state import GroupRecord, Outbox, PageKind, StoredState, Topic
from queuewatch.config.routes import Routing
from queuewatch.evaluate.result import EvaluationResult
from queuewatch.evaluate.stack import Stack
from queuewatch.model.rules import alert_kind
from queuewatch.notifications import Origin, render

# Bytes kept free in a group's item for what may grow after rendering: the version's digits, a retry's claim.
ITEM_MARGIN = 1024

if TYPE_CHECKING:
    from mypy_boto3_dynamodb import DynamoDBClient
    from mypy_boto3_sns import SNSClient


class EvaluatorMemory:
    """What this process remembers between ticks: the pages SNS accepted, and the newest tick it judged.

    Kept in the handler's module, this survives warm invocations (the evaluator runs one at a
    time, so usually in one container). Pages: if DynamoDB fails right after SNS accepted a
    page, the outbox still holds it; the next tick then clears the outbox without publishing.
    Newest tick: the state table's cursor advances only when a tick changes state (so steady
    ticks write nothing); remembering every judged tick here keeps a late snapshot from being
    applied over newer ones that changed nothing. After a cold start both are empty: that page
    goes out a second time, with the same notification_id and dedup_key, so pagers merge it,
    and a snapshot later than the cursor but older than the last unchanged tick still applies.
    """

    def __init__(self) -> None:
        # Not a fixed-size cache: one tick can send a page per group (5,000 with group_by: runner_type),
        # and a page forgotten too soon would go out twice. Instead each tick keeps only the pages
        # still waiting in an outbox (forget_sent_except), so it holds at most what the table holds.
        self._keys: set[str] = set()
        self.newest_tick: datetime | None = None

    def judged(self, tick: datetime) -> None:
        if self.newest_tick is None or tick > self.newest_tick:
            self.newest_tick = tick

    @staticmethod
    def _key(outbox: Outbox, destination: Topic) -> str:
        # The message carries evaluated_at, so a later page with the same sequence differs.
        return hashlib.sha256(f"{destination}\n{outbox.notification_id}\n{outbox.message}".encode()).hexdigest()

    def remember(self, outbox: Outbox, destination: Topic = Topic.ALERT) -> None:
        self._keys.add(self._key(outbox, destination))

    def forget_sent_except(self, state: StoredState) -> None:
        """Forget every page but those still pending in an outbox: only those can be asked about again."""
        waiting = {
            self._key(record.outbox, destination)
            for record in state.groups.values()
            if record.outbox is not None
            for destination in record.outbox.pending
        }
        self._keys &= waiting

    def __len__(self) -> int:
        return len(self._keys)

    def holds(self, outbox: Outbox, destination: Topic = Topic.ALERT) -> bool:
        return self._key(outbox, destination) in self._keys


def destinations(alert: Alert, stack: Stack, routing: Routing) -> tuple[Topic, ...]:
    """The topics the config's routes send the alert to (config/routes.py).

    The chat topic: when a route sends the alert to the chat receiver. The alert topic, whose subscriptions
    filter on the same routes: every page and monitor page (a subscription of one's own may want them), and a
    ticket only when a route sends tickets to a receiver there, so that a ticket goes where routes name
    `ticket` and nowhere else, whatever is subscribed by hand.
    """
    attributes = alert.message_attributes()
    reached = routing.destinations(attributes)
    topics: list[Topic] = []
    if alert_kind(alert.rule) != "ticket" or any(not receiver.chat for receiver in reached):
        topics.append(Topic.ALERT)
    if stack.chat_topic_arn is not None and any(receiver.chat for receiver in reached):
        topics.append(Topic.CHAT)
    return tuple(topics)


def outbox_for(
    alert: Alert, record: GroupRecord, stack: Stack, now: datetime, routing: Routing, kind: PageKind
) -> Outbox:
    """The page as it waits to be published: every body rendered, pending on each topic its routes name.

    One budget, from DynamoDB's item limit: the group's item (its members, the outbox and every other
    attribute) must fit 400 KB, so the bodies get what the rest of the item leaves them.
    """
    pending = destinations(alert, stack, routing)
    chat = Topic.CHAT in pending
    outbox = Outbox(
        notification_id=alert.notification_id,
        subject=alert.subject,
        message="",
        attributes=alert.message_attributes(),
        message_structure="json",
        claimed_at=now,
        chat_message="" if chat else None,
        pending=pending,
        kind=kind,
    )
    room = ITEM_LIMIT - ITEM_MARGIN - group_item_size(replace(record, outbox=outbox), now)
    origin = Origin.of_topic(stack.topic_arn, stack.metrics_namespace)
    bodies = render(alert, origin, room=room, chat=chat, queue_body=stack.queue_body)
    return replace(outbox, message=bodies.message, chat_message=bodies.chat)


@dataclass
class Delivery:
    """One evaluation's way to the state table and the topics, and the result it adds to."""

    dynamodb: DynamoDBClient
    sns: SNSClient
    stack: Stack
    now: datetime
    result: EvaluationResult
    memory: EvaluatorMemory
    writer: str  # stamps this evaluation's writes: see adapters/state_table/alerts.py
    _errors: dict[tuple[str, Topic], str] = field(default_factory=dict)  # a refused publish's reason, for its log

    def retry_unsent(self, state: StoredState) -> None:
        """Re-send each page whose sender's lease on its outbox has run out."""
        self.memory.forget_sent_except(state)
        for key, record in list(state.groups.items()):
            outbox = record.outbox
            if outbox is None or (self.now - outbox.claimed_at).total_seconds() < self.stack.outbox_lease_seconds:
                continue  # nothing unsent, or its sender may still be at work
            reclaimed = replace(record, outbox=replace(outbox, claimed_at=self.now))
            try:
                put_group(self.dynamodb, self.stack.table, reclaimed, record.version, self.now, self.writer)
            except WriteConflict:
                continue
            self.result.writes += 1
            self.result.pages_retried.append(outbox.notification_id)
            stored = self.send(reclaimed, record.version + 1)
            if stored is None:
                del state.groups[key]
            else:
                state.groups[key] = stored

    def send(self, record: GroupRecord, version: int) -> GroupRecord | None:
        """Publish the outbox to every topic still pending; on success clear it, or drop a finished group.

        Returns what is stored afterwards (None: the group's item is gone).
        """
        outbox = record.outbox
        assert outbox is not None
        tried = {destination: self._publish(outbox, destination) for destination in outbox.pending}
        for destination, outcome in tried.items():
            if outcome is not None:
                self._log(record, outbox, destination, outcome)
        accepted = [destination for destination, outcome in tried.items() if outcome in (None, SENT)]
        pending = tuple(d for d in outbox.pending if d not in accepted)
        try:
            if pending:
                if not accepted:
                    return replace(record, version=version)
                narrowed = replace(record, outbox=replace(outbox, pending=pending))
                put_group(self.dynamodb, self.stack.table, narrowed, version, self.now, self.writer)
                self.result.writes += 1
                return replace(narrowed, version=version + 1)
            if record.status is None:
                delete_group(self.dynamodb, self.stack.table, record.key, version, self.writer)
                self.result.writes += 1
                return None
            cleared = replace(record, outbox=None)
            put_group(self.dynamodb, self.stack.table, cleared, version, self.now, self.writer)
            self.result.writes += 1
            return replace(cleared, version=version + 1)
        except WriteConflict:
            return replace(record, version=version)

    def _publish(self, outbox: Outbox, destination: Topic) -> str | None:
        """SENT or FAILED (left pending, and reported); None: the topic has it already, or is gone."""
        topic_arn = self.stack.topic(destination)
        if topic_arn is None:  # the stack no longer has that topic
            return None
        if self.memory.holds(outbox, destination):  # SNS has it already; only the clearing write was lost
            return None
        chat = destination == Topic.CHAT
        try:
            publish(
                self.sns,
                topic_arn,
                subject=outbox.subject,
                message=(outbox.chat_message or "") if chat else outbox.message,
                attributes=outbox.attributes,
                message_structure=None if chat else outbox.message_structure,
            )
        except Exception as error:  # noqa: BLE001 - kept in the outbox; the next tick publishes it
            reason = f"{outbox.notification_id} to the {destination} topic: {describe(error)}"
            self.result.pages_failed.append(reason)
            self._errors[(outbox.notification_id, destination)] = describe(error)
            return FAILED
        self.memory.remember(outbox, destination)
        if destination == Topic.ALERT:
            self.result.pages_sent.append(outbox.notification_id)
        return SENT

    def _log(self, record: GroupRecord, outbox: Outbox, destination: Topic, outcome: str) -> None:
        """One item in the sent log (adapters/state_table/sent_log.py); a log that cannot be written never holds a
        page back."""
        attributes = outbox.attributes
        entry = SentEntry(
            at=self.now,
            page_at=record.last_notified_at or outbox.claimed_at,
            notification_id=outbox.notification_id,
            kind=str(outbox.kind),
            outcome=outcome,
            topic=str(destination),
            rule=record.rule,
            group=record.group,
            priority=str(attributes.get("priority", "")),
            team=str(attributes.get("team", "")),
            runner_types=record.members,
            runner_types_affected=len(record.members),
            subject=outbox.subject,
            error=self._errors.pop((outbox.notification_id, destination), None),
        )
        try:
            if put_entry(self.dynamodb, self.stack.table, entry):
                self.result.writes += 1
        except Exception as error:  # noqa: BLE001 - the page matters more than its log line
            self.result.log_failed.append(f"{outbox.notification_id} ({outcome}): {describe(error)}")
