"""What `make build` subscribes: each receiver of the config's routes, with the filter policy its routes make.

Written into the built template beside the dashboard's lines (build.py), so a deployed stack's subscriptions
are exactly the config's routes and nothing is subscribed by hand. The chat receiver gets no subscription: AWS
Chatbot subscribes itself to the chat topic, and the evaluator publishes there what the routes send to chat.
"""

from __future__ import annotations

from typing import Any

from queuewatch.config.routes import Receiver, logical_id
from queuewatch.config.schema import Config

SUBSCRIPTION_SUFFIX = "Subscription"
HEARTBEAT_SUFFIX = "HeartbeatSubscription"
# The topic the pages go to, as the template's e-mail and pager subscriptions always named it.
PAGES_TOPIC = {"Fn::If": ["CreateAlertTopic", {"Ref": "AlertTopic"}, {"Ref": "ExistingAlertTopicArn"}]}
# SNS subscribes in the topic's region: a shared topic's own, else the stack's (CloudFormation's default).
PAGES_TOPIC_REGION = {
    "Fn::If": [
        "CreateAlertTopic",
        {"Ref": "AWS::NoValue"},
        {"Fn::Select": [3, {"Fn::Split": [":", {"Ref": "ExistingAlertTopicArn"}]}]},
    ]
}


def resource_name(receiver: Receiver, suffix: str = SUBSCRIPTION_SUFFIX) -> str:
    return f"Receiver{logical_id(receiver.name)}{suffix}"


def subscriptions(config: Config) -> dict[str, dict[str, Any]]:
    """The template resources of the config's receivers, by logical id."""
    routing = config.routing
    resources: dict[str, dict[str, Any]] = {}
    for receiver in routing.receivers:
        if receiver.chat:
            continue
        resources[resource_name(receiver)] = {
            "Type": "AWS::SNS::Subscription",
            "Properties": {
                "TopicArn": PAGES_TOPIC,
                "Region": PAGES_TOPIC_REGION,
                "Protocol": receiver.protocol,
                "Endpoint": receiver.endpoint,
                "FilterPolicy": routing.filter_policy(receiver.name),
            },
        }
        takes_monitor = any("monitor" in route.kinds for route in routing.routes_to(receiver.name))
        if receiver.pager and takes_monitor:
            # The stack's alarms (the heartbeat) carry no message attributes: unfiltered, on the monitor topic.
            resources[resource_name(receiver, HEARTBEAT_SUFFIX)] = {
                "Type": "AWS::SNS::Subscription",
                "Properties": {"TopicArn": {"Ref": "MonitorTopic"}, "Protocol": "https", "Endpoint": receiver.pager},
            }
    return resources


def add_subscriptions(template: dict[str, Any], config: Config) -> None:
    """Add the receivers' subscriptions to the template; a name the template already holds is an error."""
    added = subscriptions(config)
    taken = sorted(set(added) & set(template["Resources"]))
    if taken:
        raise ValueError(f"the template already has {', '.join(taken)}: rename the receiver")
    template["Resources"].update(added)
