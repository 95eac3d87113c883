"""Read-only SQS calls: queue depth and queue listing. Never receive, delete or change visibility."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_sqs import SQSClient

DEPTH_ATTRIBUTES = (
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
)


@dataclass(frozen=True)
class QueueDepth:
    visible: int
    in_flight: int
    delayed: int

    @property
    def total(self) -> int:
        return self.visible + self.in_flight + self.delayed


def queue_url(region: str, account_id: str, queue_name: str) -> str:
    """The queue's URL, built rather than looked up: SQS routes on the client's endpoint, not the URL's host."""
    return f"https://sqs.{region}.amazonaws.com/{account_id}/{queue_name}"


def read_queue_depth(client: SQSClient, url: str) -> QueueDepth:
    """One GetQueueAttributes call. Raises the client's error as is."""
    answer = client.get_queue_attributes(QueueUrl=url, AttributeNames=list(DEPTH_ATTRIBUTES))  # type: ignore[arg-type]
    return depth_of({str(name): value for name, value in answer["Attributes"].items()})


def depth_of(attributes: Mapping[str, object]) -> QueueDepth:
    """The depth from GetQueueAttributes' answer; an attribute SQS left out counts as 0."""
    return QueueDepth(
        visible=int(str(attributes.get("ApproximateNumberOfMessages", 0))),
        in_flight=int(str(attributes.get("ApproximateNumberOfMessagesNotVisible", 0))),
        delayed=int(str(attributes.get("ApproximateNumberOfMessagesDelayed", 0))),
    )


def list_queue_urls(client: SQSClient, name_prefix: str) -> list[str]:
    """Every queue URL whose name starts with the prefix, across ListQueues pages."""
    urls: list[str] = []
    kwargs: dict[str, object] = {"QueueNamePrefix": name_prefix, "MaxResults": 1000}
    while True:
        page = client.list_queues(**kwargs)  # type: ignore[arg-type]
        urls.extend(page.get("QueueUrls", []))
        token = page.get("NextToken")
        if not token:
            return urls
        kwargs["NextToken"] = token
