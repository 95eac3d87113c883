"""template.yaml, read as CloudFormation: least privilege, encryption, and the alarms that watch the watcher."""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Iterator
from typing import Any, get_args

import pytest
import yaml
from support import CloudFormationLoader, load_template, load_template_as_written

from queuewatch.alerting.alert import QueueBody
from queuewatch.config.load import parse_config
from queuewatch.model.demand_paths import beside
from queuewatch.model.jobs import BUCKET, EXPIRES_AT, HISTORY_INDEX, PARTITION_KEY, QUEUED_AT
from queuewatch.runtime.settings import EvaluateSettings, TrackSettings
from queuewatch.track.stage import HISTORY_AFTER
from queuewatch.track.telemetry import record_webhook
from queuewatch.track.webhook import Refusal, WebhookResponse
from queuewatch_cli.commands.build.subscriptions import subscriptions
from queuewatch_cli.devkit.handlers import REPO_ROOT

# SQS actions that take a message or change what the autoscaler would see of it.
CONSUMING_SQS_ACTIONS = frozenset(
    {"sqs:receivemessage", "sqs:deletemessage", "sqs:deletemessagebatch", "sqs:changemessagevisibility",
     "sqs:changemessagevisibilitybatch", "sqs:purgequeue", "sqs:*"}
)  # fmt: skip
# The only actions granted on "*": AWS offers no resource-level permission for them.
UNSCOPABLE = frozenset(
    {
        "sqs:ListQueues",
        "cloudwatch:GetMetricData",
        "xray:PutTraceSegments",
        "xray:PutTelemetryRecords",
        "logs:GetQueryResults",  # they name a query id; StartQuery is the one scoped to log groups
        "logs:StopQuery",
    }
)
ALARM_PREFIX = "${AWS::StackName}-queuewatch-"

# Other accounts' queues: any account's by name, where the queue's owner is one of WatchedAccountIds
# (test_other_accounts_queues_are_granted_to_the_listed_accounts_alone).
OTHER_ACCOUNTS = '{"StringEqualsIfExists": {"aws:ResourceAccount": {"Ref": "WatchedAccountIds"}}}'

# Each role's statements: (condition the statement depends on, actions, resource, IAM condition).
MATCHER_CONFIG_RESOURCE = json.dumps(
    {
        "Fn::If": [
            "HasMatcherConfigPath",
            {"Fn::Sub": "arn:${AWS::Partition}:ssm:*:${AWS::AccountId}:parameter${AutoscalerMatcherConfigPath}*"},
            {
                "Fn::Sub": "arn:${AWS::Partition}:ssm:*:${AWS::AccountId}:parameter/github-action-runners/"
                "${AutoscalerPrefix}/webhook/runner-matcher-config*"
            },
        ]
    }
)


EXPECTED_ROLES: dict[str, set[tuple[str | None, frozenset[str], str, str | None]]] = {
    "CollectRole": {
        (None, frozenset({"sqs:GetQueueAttributes"}),
         "Sub arn:${AWS::Partition}:sqs:*:${AWS::AccountId}:${WatchedQueueNamePattern}", None),
        (None, frozenset({"sqs:GetQueueAttributes"}),
         "Sub arn:${AWS::Partition}:sqs:*:${AWS::AccountId}:${WatchedJobRetryQueueNamePattern}", None),
        *(
            ("WatchesOtherAccounts", frozenset({"sqs:GetQueueAttributes"}),
             f"Sub arn:${{AWS::Partition}}:sqs:*:*:${{{pattern}}}", OTHER_ACCOUNTS)
            for pattern in ("WatchedQueueNamePattern", "WatchedJobRetryQueueNamePattern")
        ),
        (None, frozenset({"sqs:ListQueues"}), "*", None),
        (None, frozenset({"cloudwatch:GetMetricData"}), "*", None),
        (None, frozenset({"lambda:InvokeFunction"}), "GetAtt EvaluateFunction.Arn", None),
        ("Tracking", frozenset({"dynamodb:Query"}), "Sub ${JobsTable.Arn}/index/history", None),
        ("Tracking", frozenset({"dynamodb:Query"}), "GetAtt SloTable.Arn", None),
        ("Tracking", frozenset({"dynamodb:BatchGetItem"}), "GetAtt JobsTable.Arn",
         '{"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["source#*"]}}'),  # the job sources' heartbeats
        (None, frozenset({"logs:CreateLogStream", "logs:PutLogEvents"}), "GetAtt CollectLogGroup.Arn", None),
        ("TracingActive", frozenset({"xray:PutTraceSegments", "xray:PutTelemetryRecords"}), "*", None),
        # The autoscaler's scale-up and job-retry log groups, by its prefix, and nothing else's.
        *(
            ("ReadsAutoscalerLogs", frozenset({"logs:StartQuery"}),
             "Sub arn:${AWS::Partition}:logs:*:${AWS::AccountId}:log-group:"
             f"/aws/lambda/${{AutoscalerPrefix}}-*{fn}{tail}",
             None)
            for fn in ("scale-up", "job-retry")
            for tail in ("", ":*")
        ),
        ("ReadsAutoscalerLogs", frozenset({"logs:GetQueryResults", "logs:StopQuery"}), "*", None),
    },
    "EvaluateRole": {
        (None, frozenset({"dynamodb:Query", "dynamodb:PutItem", "dynamodb:DeleteItem"}), "GetAtt StateTable.Arn", None),
        (None, frozenset({"sns:Publish"}),
         '{"Fn::If": ["CreateAlertTopic", {"Ref": "AlertTopic"}, {"Ref": "ExistingAlertTopicArn"}]}', None),
        (None, frozenset({"sns:Publish"}),
         '{"Fn::If": ["CreateChatTopic", {"Ref": "ChatTopic"}, {"Ref": "ChatTopicArn"}]}', None),
        (None, frozenset({"kms:GenerateDataKey", "kms:Decrypt"}), "GetAtt QueuewatchKey.Arn",
         '{"StringEquals": {"kms:ViaService": {"Fn::Sub": "sns.${AWS::Region}.amazonaws.com"}}}'),
        (None, frozenset({"logs:CreateLogStream", "logs:PutLogEvents"}), "GetAtt EvaluateLogGroup.Arn", None),
        ("TracingActive", frozenset({"xray:PutTraceSegments", "xray:PutTelemetryRecords"}), "*", None),
    },
    # The tracker writes its own table and nothing else: no state table, no topic, and of queues only the
    # webhook's own, which it consumes.
    "TrackRole": {
        (None, frozenset({"dynamodb:UpdateItem"}), "GetAtt JobsTable.Arn", None),
        (None, frozenset({"dynamodb:PutItem", "dynamodb:UpdateItem"}), "GetAtt SloTable.Arn", None),
        (None, frozenset({"logs:CreateLogStream", "logs:PutLogEvents"}), "GetAtt TrackLogGroup.Arn", None),
        ("TrackFromBus", frozenset({"sqs:SendMessage"}), "GetAtt TrackDeadLetterQueue.Arn", None),
        ("TrackFromWebhook", frozenset({"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"}),
         "GetAtt WebhookQueue.Arn", None),
        ("TracingActive", frozenset({"xray:PutTraceSegments", "xray:PutTelemetryRecords"}), "*", None),
        # The autoscaler's matcher config alone: its parameter and chunks, never the GitHub App's beside it.
        ("ReadsMatcherConfig", frozenset({"ssm:GetParameters"}), MATCHER_CONFIG_RESOURCE, None),
    },
    # The weekly digest reads what `queuewatch slo` reads and the sent log's partitions alone, and posts to the
    # chat topic: never the alert state, never the pager's topic.
    "DigestRole": {
        (None, frozenset({"dynamodb:Query"}), "GetAtt SloTable.Arn", None),
        (None, frozenset({"dynamodb:Query"}), "Sub ${JobsTable.Arn}/index/history", None),
        (None, frozenset({"dynamodb:Query"}), "GetAtt StateTable.Arn",
         '{"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["sent#*"]}}'),
        (None, frozenset({"sns:Publish"}),
         '{"Fn::If": ["CreateChatTopic", {"Ref": "ChatTopic"}, {"Ref": "ChatTopicArn"}]}', None),
        (None, frozenset({"kms:GenerateDataKey", "kms:Decrypt"}), "GetAtt QueuewatchKey.Arn",
         '{"StringEquals": {"kms:ViaService": {"Fn::Sub": "sns.${AWS::Region}.amazonaws.com"}}}'),
        (None, frozenset({"logs:CreateLogStream", "logs:PutLogEvents"}), "GetAtt DigestLogGroup.Arn", None),
        ("TracingActive", frozenset({"xray:PutTraceSegments", "xray:PutTelemetryRecords"}), "*", None),
    },
    # The open URL's function reads the secret and queues: no table, no other queue.
    "WebhookRole": {
        (None, frozenset({"secretsmanager:GetSecretValue"}), "Ref WebhookSecretArn", None),
        (None, frozenset({"sqs:SendMessage"}), "GetAtt WebhookQueue.Arn", None),
        (None, frozenset({"logs:CreateLogStream", "logs:PutLogEvents"}), "GetAtt TrackLogGroup.Arn", None),
        ("TracingActive", frozenset({"xray:PutTraceSegments", "xray:PutTelemetryRecords"}), "*", None),
    },
}  # fmt: skip
# The only queue any role may consume: the stack's own, which the webhook fills. Never the autoscaler's.
OWN_QUEUE = "GetAtt WebhookQueue.Arn"


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    return load_template()


def resources(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: r for name, r in template["Resources"].items() if r["Type"] == kind}


def render(value: Any) -> str:
    """A short, comparable form of a resource reference."""
    if isinstance(value, str):
        return value
    if "Ref" in value:
        return f"Ref {value['Ref']}"
    if "Fn::GetAtt" in value:
        return "GetAtt " + ".".join(value["Fn::GetAtt"])
    if "Fn::Sub" in value:
        return f"Sub {value['Fn::Sub']}"
    return json.dumps(value, sort_keys=True)


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def statements(document: dict[str, Any]) -> Iterator[tuple[str | None, dict[str, Any]]]:
    """Every statement with the template condition it depends on (for `!If [Cond, stmt, NoValue]`)."""
    for statement in as_list(document["Statement"]):
        if "Fn::If" in statement:
            condition, then, otherwise = statement["Fn::If"]
            assert otherwise == {"Ref": "AWS::NoValue"}
            yield condition, then
        else:
            yield None, statement


def policy_documents(node: Any) -> Iterator[dict[str, Any]]:
    """Every IAM policy document anywhere in the template: role, key and topic policies alike."""
    if isinstance(node, dict):
        if "Statement" in node:
            yield node
        for value in node.values():
            yield from policy_documents(value)
    elif isinstance(node, list):
        for value in node:
            yield from policy_documents(value)


def role_statements(role: dict[str, Any]) -> set[tuple[str | None, frozenset[str], str, str | None]]:
    found = set()
    for policy in role["Properties"]["Policies"]:
        for condition, statement in statements(policy["PolicyDocument"]):
            assert statement["Effect"] == "Allow"
            iam_condition = json.dumps(statement["Condition"], sort_keys=True) if "Condition" in statement else None
            for resource in as_list(statement["Resource"]):
                found.add((condition, frozenset(as_list(statement["Action"])), render(resource), iam_condition))
    return found


def test_each_function_has_its_own_role_and_no_sam_generated_policy(template: dict[str, Any]) -> None:
    functions = resources(template, "AWS::Serverless::Function")
    roles = {name: f["Properties"]["Role"] for name, f in functions.items()}
    assert roles == {
        "CollectFunction": {"Fn::GetAtt": ["CollectRole", "Arn"]},
        "EvaluateFunction": {"Fn::GetAtt": ["EvaluateRole", "Arn"]},
        "TrackFunction": {"Fn::GetAtt": ["TrackRole", "Arn"]},
        "WebhookFunction": {"Fn::GetAtt": ["WebhookRole", "Arn"]},
        "WebhookDeliveriesFunction": {"Fn::GetAtt": ["TrackRole", "Arn"]},
        "DigestFunction": {"Fn::GetAtt": ["DigestRole", "Arn"]},
    }
    # With a Role given, SAM adds no policy (no AWSLambdaBasicExecutionRole with logs on "*").
    assert all("Policies" not in f["Properties"] for f in functions.values())
    assert set(resources(template, "AWS::IAM::Role")) == set(EXPECTED_ROLES)


@pytest.mark.parametrize("role", sorted(EXPECTED_ROLES))
def test_each_role_grants_exactly_the_expected_statements(template: dict[str, Any], role: str) -> None:
    assert role_statements(template["Resources"][role]) == EXPECTED_ROLES[role]


def test_roles_are_assumable_by_lambda_only(template: dict[str, Any]) -> None:
    for role in resources(template, "AWS::IAM::Role").values():
        [statement] = role["Properties"]["AssumeRolePolicyDocument"]["Statement"]
        assert statement["Principal"] == {"Service": "lambda.amazonaws.com"}
        assert statement["Action"] == "sts:AssumeRole"


def test_no_policy_anywhere_allows_a_wildcard_or_message_consuming_action(template: dict[str, Any]) -> None:
    documents = list(policy_documents(template["Resources"]))
    assert len(documents) >= 6  # two roles, their trust policies, the key policy, the topic policy
    for document in documents:
        for _, statement in statements(document):
            actions = [a.lower() for a in as_list(statement["Action"])]
            assert not [a for a in actions if "*" in a], statement
            if statement["Effect"] == "Allow" and CONSUMING_SQS_ACTIONS & set(actions):
                assert [render(r) for r in as_list(statement["Resource"])] == [OWN_QUEUE], statement


def test_the_collector_reads_sqs_and_nothing_else_does(template: dict[str, Any]) -> None:
    granted: dict[str, set[str]] = {}
    for name, role in resources(template, "AWS::IAM::Role").items():
        granted[name] = {a for _, actions, _, _ in role_statements(role) for a in actions if a.startswith("sqs:")}
    assert granted == {
        "CollectRole": {"sqs:GetQueueAttributes", "sqs:ListQueues"},
        "EvaluateRole": set(),
        # into its own dead-letter queue; from the webhook's own queue (OWN_QUEUE)
        "TrackRole": {"sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"},
        "WebhookRole": {"sqs:SendMessage"},  # into the webhook's own queue
        "DigestRole": set(),
    }


def test_wildcard_resources_only_for_actions_without_resource_level_permissions(template: dict[str, Any]) -> None:
    for role in resources(template, "AWS::IAM::Role").values():
        for _, actions, resource, _ in role_statements(role):
            if resource == "*":
                assert actions <= UNSCOPABLE, actions


def test_the_alert_topic_is_encrypted_with_the_stacks_key_and_refuses_plain_http(template: dict[str, Any]) -> None:
    for name in ("AlertTopic", "MonitorTopic", "ChatTopic"):
        topic = template["Resources"][name]["Properties"]
        assert topic["KmsMasterKeyId"] == {"Fn::GetAtt": ["QueuewatchKey", "Arn"]}, name
    policies = resources(template, "AWS::SNS::TopicPolicy")
    chat = policies.pop("ChatTopicPolicy")["Properties"]
    [chat_deny] = [s for _, s in statements(chat["PolicyDocument"])]
    assert chat["Topics"] == [{"Ref": "ChatTopic"}] and chat_deny["Effect"] == "Deny"
    assert chat_deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    [policy] = policies.values()
    assert policy["Properties"]["Topics"] == [{"Ref": "AlertTopic"}, {"Ref": "MonitorTopic"}]
    by_effect = {s["Effect"]: s for _, s in statements(policy["Properties"]["PolicyDocument"])}
    deny = by_effect["Deny"]
    assert deny["Principal"] == "*" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert {"sns:Publish", "sns:Subscribe", "sns:SetTopicAttributes"} <= set(deny["Action"])
    allow = by_effect["Allow"]
    assert allow["Principal"] == {"Service": "cloudwatch.amazonaws.com"} and allow["Action"] == "sns:Publish"
    assert allow["Condition"]["ArnLike"]["aws:SourceArn"]["Fn::Sub"].endswith(f":alarm:{ALARM_PREFIX}*")


def test_the_key_lets_the_stacks_alarms_publish_and_rotates(template: dict[str, Any]) -> None:
    key = template["Resources"]["QueuewatchKey"]["Properties"]
    assert key["EnableKeyRotation"] is True
    by_sid = {s["Sid"]: s for _, s in statements(key["KeyPolicy"])}
    alarms = by_sid["CloudWatchAlarmsOfThisStackPublishToTheEncryptedTopic"]
    assert alarms["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    assert set(alarms["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey"}
    assert alarms["Condition"]["ArnLike"]["aws:SourceArn"]["Fn::Sub"].endswith(f":alarm:{ALARM_PREFIX}*")
    account = by_sid["AccountAdministersAndUsesTheKeyThroughIam"]
    assert account["Principal"] == {"AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}}
    assert {"kms:PutKeyPolicy", "kms:ScheduleKeyDeletion", "kms:Decrypt"} <= set(account["Action"])
    logs = by_sid["CloudWatchLogsEncryptThisStacksLogGroups"]
    assert logs["Condition"]["ArnLike"]["kms:EncryptionContext:aws:logs:arn"]["Fn::Sub"].endswith(
        ":log-group:/queuewatch/${AWS::StackName}/*"
    )
    for group in resources(template, "AWS::Logs::LogGroup").values():
        assert group["Properties"]["KmsKeyId"] == {"Fn::GetAtt": ["QueuewatchKey", "Arn"]}
        assert group["Properties"]["LogGroupName"]["Fn::Sub"].startswith("/queuewatch/${AWS::StackName}/")


def alarm_metrics(props: dict[str, Any]) -> list[dict[str, Any]]:
    """The metrics an alarm reads: its one metric, or each of a metric-math alarm's."""
    if "Metrics" not in props:
        return [{key: props[key] for key in ("Namespace", "MetricName", "Dimensions")}]
    return [query["MetricStat"]["Metric"] for query in props["Metrics"] if "MetricStat" in query]


def alarm_name(props: dict[str, Any]) -> str:
    """An alarm's AlarmName as its Fn::Sub writes it, with the Sub's own literal variables (a loop's) filled in."""
    sub = props["AlarmName"]["Fn::Sub"]
    if isinstance(sub, str):
        return sub
    text, variables = sub
    return re.sub(r"\$\{(\w+)\}", lambda m: str(variables.get(m[1], m[0])), text)


def test_every_alarm_pages_the_topic_under_a_name_the_policies_admit(template: dict[str, Any]) -> None:
    alarms = resources(template, "AWS::CloudWatch::Alarm")
    names = [alarm_name(alarm["Properties"]) for alarm in alarms.values()]
    assert len(set(names)) == len(names), names  # one alarm per name: CloudWatch keeps only the last put
    watched = set()
    for name, alarm in alarms.items():
        props = alarm["Properties"]
        # AlertTopic for every subscriber; MonitorTopic for a pager whose AlertTopic filter drops alarms
        topics = [{"Ref": "AlertTopic"}, {"Ref": "MonitorTopic"}]
        if name == "DigestErrorsAlarm":  # a missed weekly digest goes where the digest goes, never to the pager
            chat = {"Fn::If": ["CreateChatTopic", {"Ref": "ChatTopic"}, {"Ref": "ChatTopicArn"}]}
            assert props["AlarmActions"] == [chat] and "OKActions" not in props
        else:
            assert props["AlarmActions"] == topics and props["OKActions"] == topics
        assert alarm_name(props).startswith(ALARM_PREFIX)
        for metric in alarm_metrics(props):
            dimension = {d["Name"]: d["Value"] for d in metric["Dimensions"]}
            if metric["Namespace"] == "Queuewatch":  # queuewatch's own metrics: this stack's, not a neighbour's
                assert dimension["Stack"] == {"Ref": "AWS::StackName"}, metric["MetricName"]
            watched.add((metric["Namespace"], metric["MetricName"], render(dimension.get("FunctionName", ""))))
    assert watched == {
        ("Queuewatch", "WebhookDeliveriesRefused", ""),  # the webhook's refusals, by reason, against
        ("Queuewatch", "WebhookDeliveriesTaken", ""),  # what it took
        ("AWS/Lambda", "Errors", "Ref TrackFunction"),
        ("AWS/Lambda", "Throttles", "Ref TrackFunction"),
        ("AWS/Lambda", "AsyncEventAge", "Ref TrackFunction"),
        ("Queuewatch", "Heartbeat", ""),
        ("Queuewatch", "PagesFailed", ""),
        ("AWS/Lambda", "Errors", "Ref CollectFunction"),
        ("AWS/Lambda", "Throttles", "Ref CollectFunction"),
        ("AWS/Lambda", "Errors", "Ref EvaluateFunction"),
        ("AWS/Lambda", "Throttles", "Ref EvaluateFunction"),
        ("AWS/SQS", "ApproximateNumberOfMessagesVisible", ""),  # the track and webhook dead-letter queues
        ("AWS/Lambda", "Errors", "Ref WebhookFunction"),
        ("AWS/Lambda", "Throttles", "Ref WebhookFunction"),
        ("AWS/Lambda", "Errors", "Ref DigestFunction"),
    }
    assert alarms["HeartbeatAlarm"]["Properties"]["TreatMissingData"] == "breaching"


def test_evaluations_run_one_at_a_time(template: dict[str, Any]) -> None:
    assert template["Resources"]["EvaluateFunction"]["Properties"]["ReservedConcurrentExecutions"] == 1


def test_the_state_table_is_encrypted_and_recoverable(template: dict[str, Any]) -> None:
    table = template["Resources"]["StateTable"]["Properties"]
    assert table["SSESpecification"]["SSEEnabled"] is True
    assert table["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True


def test_every_scanner_suppression_gives_its_reason(template: dict[str, Any]) -> None:
    skips = [
        (name, skip)
        for name, resource in template["Resources"].items()
        for skip in resource.get("Metadata", {}).get("checkov", {}).get("skip", [])
    ]
    assert skips
    for name, skip in skips:
        assert skip["id"].startswith("CKV_") and len(skip.get("comment", "")) > 40, (name, skip)


def test_the_functions_never_log_their_event(template: dict[str, Any]) -> None:
    env = template["Globals"]["Function"]["Environment"]["Variables"]
    for function in resources(template, "AWS::Serverless::Function").values():
        env = {**env, **function["Properties"].get("Environment", {}).get("Variables", {})}
    assert "POWERTOOLS_LOGGER_LOG_EVENT" not in env and env["POWERTOOLS_LOG_LEVEL"] == "INFO"


def resolve(node: Any, parameters: dict[str, str], conditions: dict[str, bool]) -> Any:
    """The value CloudFormation would give `node` for these parameters and conditions (the intrinsics used here)."""
    if isinstance(node, list):
        return [resolve(item, parameters, conditions) for item in node]
    if not isinstance(node, dict):
        return node
    if "Fn::If" in node:
        condition, then, otherwise = node["Fn::If"]
        return resolve(then if conditions[condition] else otherwise, parameters, conditions)
    if "Ref" in node:
        name = node["Ref"]
        return None if name == "AWS::NoValue" else parameters.get(name, f"<{name}>")
    if "Fn::Select" in node:
        index, items = node["Fn::Select"]
        return resolve(items, parameters, conditions)[int(index)]
    if "Fn::Split" in node:
        separator, text = node["Fn::Split"]
        return str(resolve(text, parameters, conditions)).split(separator)
    if "Fn::Sub" in node and isinstance(node["Fn::Sub"], str):
        return re.sub(r"\$\{([^}]+)\}", lambda m: parameters.get(m[1], f"<{m[1]}>"), node["Fn::Sub"])
    return {key: resolve(value, parameters, conditions) for key, value in node.items()}


SHARED_TOPIC = "arn:aws:sns:us-west-2:111122223333:ci-pages"
ROUTED = """
version: 1
defaults: {rule: {team: ci-infra}}
runner_types:
  - {name: linux.2xlarge, queue: {name: ci-queued-builds}}
rules:
  - {name: jobs-queueing, thresholds: {queue_time: 5m}}
receivers:
  - {name: pager, pager: "https://events.pagerduty.com/integration/KEY/enqueue"}
  - {name: mail, email: oncall@example.com}
routes:
  - {receiver: pager, priority: P2}
  - {receiver: mail}
"""


@pytest.mark.parametrize("existing", ["", SHARED_TOPIC], ids=["own-topic", "existing-topic"])
def test_the_built_subscriptions_follow_the_topic_the_evaluator_pages(template: dict[str, Any], existing: str) -> None:
    parameters = {"ExistingAlertTopicArn": existing}
    conditions = {"CreateAlertTopic": existing == ""}
    env = template["Resources"]["EvaluateFunction"]["Properties"]["Environment"]["Variables"]
    pages_topic = resolve(env["ALERT_TOPIC_ARN"], parameters, conditions)
    assert pages_topic == (existing or "<AlertTopic>")
    built = subscriptions(parse_config(ROUTED))
    for name in ("ReceiverPagerSubscription", "ReceiverMailSubscription"):
        subscription = built[name]["Properties"]
        assert resolve(subscription["TopicArn"], parameters, conditions) == pages_topic, name
        # SNS subscribes in the topic's region; CloudFormation's default is the stack's.
        assert resolve(subscription.get("Region"), parameters, conditions) == ("us-west-2" if existing else None), name
    # The stack's own alarms still reach the pager, unfiltered, whichever topic carries the pages.
    heartbeat = built["ReceiverPagerHeartbeatSubscription"]["Properties"]
    assert heartbeat["TopicArn"] == {"Ref": "MonitorTopic"} and "FilterPolicy" not in heartbeat
    assert "MonitorTopic" in template["Resources"]


QUEUE_PATTERN_ACCEPTED = ["*-queued-builds*", "gh-ci-*-queued-builds", "gh-ci-linux-?xlarge-queued-builds", "ci.fifo"]
QUEUE_PATTERN_REFUSED = [
    "", "*", "**", "?*", "*?*", "*a*", "*ab*", "?-?", "*:*", "*/*", "gh-ci-*,*", "arn:aws:sqs:*:*:*", "ci queue*",
]  # fmt: skip


@pytest.mark.parametrize("pattern", QUEUE_PATTERN_ACCEPTED + QUEUE_PATTERN_REFUSED)
def test_the_watched_queue_pattern_cannot_grant_every_queue(template: dict[str, Any], pattern: str) -> None:
    parameter = template["Parameters"]["WatchedQueueNamePattern"]
    # CloudFormation matches AllowedPattern against the whole value (Java regex; this one reads the same in Python).
    accepted = re.fullmatch(parameter["AllowedPattern"], pattern) is not None and len(pattern) <= parameter["MaxLength"]
    assert accepted == (pattern in QUEUE_PATTERN_ACCEPTED)
    assert re.fullmatch(parameter["AllowedPattern"], parameter["Default"])
    assert "every queue" in parameter["ConstraintDescription"]


def test_tracking_is_off_unless_a_bus_or_a_webhook_secret_is_given(template: dict[str, Any]) -> None:
    conditions = template["Conditions"]
    assert template["Parameters"]["AutoscalerEventBusName"]["Default"] == ""
    assert template["Parameters"]["WebhookSecretArn"]["Default"] == ""
    tracking = {name for name, r in template["Resources"].items() if r.get("Condition") in conditions}
    assert {
        "JobsTable", "TrackRole", "TrackFunction", "TrackDeadLetterQueue",
        "WebhookFunction", "WebhookRole", "WebhookQueue", "WebhookDeadLetterQueue", "WebhookDeliveriesFunction",
    } <= tracking  # fmt: skip
    collect_env = template["Resources"]["CollectFunction"]["Properties"]["Environment"]["Variables"]
    assert resolve(collect_env["JOBS_TABLE"], {}, {"Tracking": False}) == ""  # the collector reads no jobs


def test_the_track_rule_matches_workflow_jobs_and_keeps_what_it_cannot_apply(template: dict[str, Any]) -> None:
    track = template["Resources"]["TrackFunction"]["Properties"]
    rule = track["Events"]["WorkflowJob"]["Properties"]
    assert rule["Pattern"] == {"source": ["github"], "detail-type": ["workflow_job"]}
    bus = rule["EventBusName"]
    assert resolve(bus, {"AutoscalerPrefix": "ci"}, {"HasBusOverride": False}) == "ci-runners"
    assert resolve(bus, {"AutoscalerEventBusName": "other"}, {"HasBusOverride": True}) == "other"
    assert rule["DeadLetterConfig"]["Arn"] == {"Fn::GetAtt": ["TrackDeadLetterQueue", "Arn"]}
    assert track["DeadLetterQueue"]["TargetArn"] == {"Fn::GetAtt": ["TrackDeadLetterQueue", "Arn"]}
    assert track["EventInvokeConfig"]["MaximumRetryAttempts"] == 2
    alarm = template["Resources"]["TrackDeadLettersAlarm"]["Properties"]
    assert alarm["Dimensions"] == [
        {"Name": "QueueName", "Value": {"Fn::GetAtt": ["TrackDeadLetterQueue", "QueueName"]}}
    ]
    webhook = template["Resources"]["WebhookFunction"]["Properties"]
    assert webhook["Handler"] == "app.webhook_handler" and webhook["FunctionUrlConfig"]["AuthType"] == "NONE"


def test_the_queue_subscriber_body_is_a_parameter_the_evaluator_reads(template: dict[str, Any]) -> None:
    parameter = template["Parameters"]["QueueSubscriberBody"]
    assert parameter["Default"] == "alert"
    assert set(parameter["AllowedValues"]) == set(get_args(QueueBody))
    env = template["Resources"]["EvaluateFunction"]["Properties"]["Environment"]["Variables"]
    assert env["QUEUE_BODY"] == {"Ref": "QueueSubscriberBody"}
    assert EvaluateSettings.model_fields["queue_body"].alias == "QUEUE_BODY"


def test_github_status_is_read_only_where_the_parameter_turns_it_on(template: dict[str, Any]) -> None:
    parameter = template["Parameters"]["GitHubStatus"]
    assert parameter["Default"] == "off" and set(parameter["AllowedValues"]) == {"off", "on"}
    assert template["Conditions"]["ReadGitHubStatus"] == {"Fn::Equals": [{"Ref": "GitHubStatus"}, "on"]}
    env = template["Resources"]["EvaluateFunction"]["Properties"]["Environment"]["Variables"]
    url = "https://www.githubstatus.com/api/v2/summary.json"
    assert env["GITHUB_STATUS_URL"] == {"Fn::If": ["ReadGitHubStatus", url, ""]}
    base = {
        "STATE_TABLE": "state",
        "ALERT_TOPIC_ARN": "arn:aws:sns:us-east-1:123456789012:alerts",
        "QUEUEWATCH_CONFIG": "c",
    }
    assert EvaluateSettings.model_validate({**base, "GITHUB_STATUS_URL": ""}).github_status_url is None


# --- the collector's grant on other accounts' queues, evaluated as CloudFormation would --------------------


def evaluate(node: Any, parameters: dict[str, Any], conditions: dict[str, Any]) -> Any:
    """The value of a template expression, for the intrinsic functions the collector's grant uses."""
    if isinstance(node, list):
        values = [evaluate(item, parameters, conditions) for item in node]
        return [v for v in values if v is not NO_VALUE]
    if not isinstance(node, dict):
        return node
    if len(node) != 1 or not next(iter(node)).startswith(("Fn::", "Ref", "Condition")):
        return {key: evaluate(value, parameters, conditions) for key, value in node.items()}
    [(function, argument)] = node.items()
    if function == "Ref":
        return NO_VALUE if argument == "AWS::NoValue" else parameters[argument]
    if function == "Fn::If":
        name, then, otherwise = argument
        chosen = then if evaluate(conditions[name], parameters, conditions) else otherwise
        return evaluate(chosen, parameters, conditions)
    if function == "Condition":
        return evaluate(conditions[argument], parameters, conditions)
    args = [evaluate(a, parameters, conditions) for a in as_list(argument)]
    if function == "Fn::Not":
        return not args[0]
    if function == "Fn::Equals":
        return args[0] == args[1]
    if function == "Fn::Join":
        return args[0].join(args[1])
    if function == "Fn::Split":
        return args[1].split(args[0])
    if function == "Fn::Select":
        return args[1][int(args[0])]
    if function == "Fn::Sub":
        text, variables = (args[0], args[1]) if len(args) == 2 else (args[0], {})
        known = {**parameters, **variables}
        return re.sub(r"\$\{([^}]+)\}", lambda m: str(known[m[1]]), text)
    raise AssertionError(f"not evaluated here: {function}")


NO_VALUE = object()


def other_accounts_grant(template: dict[str, Any], accounts: list[str]) -> dict[str, Any] | None:
    """The collector's statement on other accounts' queues, for a WatchedAccountIds value; None: no statement."""
    parameters = {
        "WatchedAccountIds": accounts,
        "WatchedQueueNamePattern": "*-queued-builds*",
        "WatchedJobRetryQueueNamePattern": "*-job-retry",
        "AWS::Partition": "aws",
        "AWS::AccountId": "123456789012",
    }
    conditions = template["Conditions"]
    [policy] = template["Resources"]["CollectRole"]["Properties"]["Policies"]
    for statement in policy["PolicyDocument"]["Statement"]:
        if "Fn::If" in statement and statement["Fn::If"][0] == "WatchesOtherAccounts":
            granted = evaluate(statement, parameters, conditions)
            return None if granted is NO_VALUE else dict(granted)
    raise AssertionError("no WatchesOtherAccounts statement")


def allows(statement: dict[str, Any], queue_arn: str, context: dict[str, str]) -> bool:
    """Whether an Allow statement grants sqs:GetQueueAttributes on this queue, as IAM evaluates it.

    IAM policy elements reference, Condition: a key absent from the request makes a condition false, unless
    its operator ends in IfExists, which is then true; a key with several values matches any one of them.
    Resource: '*' and '?' match within the ARN, case-sensitively.
    """
    assert statement["Effect"] == "Allow" and statement["Action"] == "sqs:GetQueueAttributes"
    if not any(fnmatch.fnmatchcase(queue_arn, pattern) for pattern in as_list(statement["Resource"])):
        return False
    for operator, tests in statement.get("Condition", {}).items():
        assert operator in ("StringEquals", "StringEqualsIfExists"), operator
        for key, values in tests.items():
            if key not in context:
                if not operator.endswith("IfExists"):
                    return False
            elif context[key] not in as_list(values):
                return False
    return True


def test_other_accounts_queues_are_granted_to_the_listed_accounts_alone(template: dict[str, Any]) -> None:
    # CloudFormation passes an empty CommaDelimitedList as [""]: the default grants nothing beyond this account.
    assert other_accounts_grant(template, [""]) is None
    listed = ["111122223333", "444455556666"]
    grant = other_accounts_grant(template, listed)
    assert grant is not None

    def reads(grant: dict[str, Any], account: str, queue: str) -> bool:
        arn = f"arn:aws:sqs:eu-west-1:{account}:{queue}"
        return allows(grant, arn, {"aws:ResourceAccount": account})  # the account that owns the queue

    for account in listed:  # each listed account's build, dead-letter and job-retry queues
        assert reads(grant, account, "gh-ci-linux-queued-builds")
        assert reads(grant, account, "gh-ci-linux-queued-builds_dead_letter")
        assert reads(grant, account, "gh-ci-linux-job-retry")
        assert not reads(grant, account, "gh-ci-webhook-events")  # and no other queue of theirs
    assert not reads(grant, "777788889999", "gh-ci-linux-queued-builds")  # nor an account left off the list
    # No cap at 10 any more: the list is the condition's values, one per account however many.
    many = [f"{n:012d}" for n in range(1, 40)]
    to_many = other_accounts_grant(template, many)
    assert to_many is not None and all(reads(to_many, account, "gh-ci-linux-job-retry") for account in many)
    # Should SQS ever leave aws:ResourceAccount out of a request, IfExists keeps cross-account reads working by
    # queue name; what stops an unlisted account then is its queue policy, which must name this role.
    assert allows(grant, "arn:aws:sqs:eu-west-1:777788889999:gh-ci-linux-queued-builds", {})


def test_the_accounts_parameter_takes_account_ids_alone(template: dict[str, Any]) -> None:
    parameter = template["Parameters"]["WatchedAccountIds"]
    assert parameter["Type"] == "CommaDelimitedList" and parameter["Default"] == ""
    # CloudFormation matches a list's AllowedPattern against each entry: an account id, or nothing.
    assert all(re.fullmatch(parameter["AllowedPattern"], a) for a in ["111122223333", ""])
    assert not any(re.fullmatch(parameter["AllowedPattern"], a) for a in ["*", "1111-2222-3333", "11112222333"])


def test_what_the_webhook_acknowledges_is_retried_and_dead_lettered_with_an_alarm(template: dict[str, Any]) -> None:
    resources_ = template["Resources"]
    webhook = resources_["WebhookFunction"]["Properties"]
    assert webhook["Environment"]["Variables"]["WEBHOOK_QUEUE_URL"] == {"Ref": "WebhookQueue"}
    queue = resources_["WebhookQueue"]["Properties"]
    assert queue["RedrivePolicy"]["deadLetterTargetArn"] == {"Fn::GetAtt": ["WebhookDeadLetterQueue", "Arn"]}
    assert queue["RedrivePolicy"]["maxReceiveCount"] >= 5  # Lambda's advice for an SQS source
    consumer = resources_["WebhookDeliveriesFunction"]["Properties"]
    assert queue["VisibilityTimeout"] >= 6 * consumer["Timeout"]
    source = consumer["Events"]["Deliveries"]["Properties"]
    assert source["Queue"] == {"Fn::GetAtt": ["WebhookQueue", "Arn"]}
    assert source["FunctionResponseTypes"] == ["ReportBatchItemFailures"]  # one failed record is retried alone
    alarm = resources_["WebhookDeadLettersAlarm"]["Properties"]
    assert alarm["Dimensions"] == [
        {"Name": "QueueName", "Value": {"Fn::GetAtt": ["WebhookDeadLetterQueue", "QueueName"]}}
    ]
    assert alarm["Threshold"] == 1 and {"Ref": "MonitorTopic"} in alarm["AlarmActions"]


def test_the_open_url_is_bounded_by_a_concurrency_parameter(template: dict[str, Any]) -> None:
    parameter = template["Parameters"]["WebhookConcurrency"]
    assert parameter["Type"] == "Number" and 1 <= parameter["Default"] <= 50 and parameter["MinValue"] >= 1
    webhook = template["Resources"]["WebhookFunction"]["Properties"]
    assert webhook["ReservedConcurrentExecutions"] == {"Ref": "WebhookConcurrency"}
    for name in ("WebhookErrorsAlarm", "WebhookThrottlesAlarm"):
        alarm = template["Resources"][name]["Properties"]
        assert alarm["Dimensions"] == [{"Name": "FunctionName", "Value": {"Ref": "WebhookFunction"}}]
        assert alarm["Threshold"] == 1 and alarm["Statistic"] == "Sum"


def test_the_outputs_the_operator_commands_read_are_there(template: dict[str, Any]) -> None:
    """`--stack NAME` finds everything in these outputs (cli/queuewatch_cli/common/stacks.py, backfill.py)."""
    outputs = template["Outputs"]
    assert {"StateTableName", "DashboardName", "MetricsNamespace", "TrackRuleArn"} <= set(outputs)
    namespace = template["Globals"]["Function"]["Environment"]["Variables"]["POWERTOOLS_METRICS_NAMESPACE"]
    assert outputs["MetricsNamespace"]["Value"] == namespace


def test_the_jobs_table_is_the_one_the_code_reads_and_keeps_the_history_its_parameter_says(
    template: dict[str, Any],
) -> None:
    # The code's layout (model/jobs.py) against the template's declaration, which the moto tables are made from.
    table = template["Resources"]["JobsTable"]["Properties"]
    assert table["KeySchema"] == [{"AttributeName": PARTITION_KEY, "KeyType": "HASH"}]
    [index] = table["GlobalSecondaryIndexes"]
    assert index["IndexName"] == HISTORY_INDEX
    assert index["KeySchema"] == [
        {"AttributeName": BUCKET, "KeyType": "HASH"},
        {"AttributeName": QUEUED_AT, "KeyType": "RANGE"},
    ]
    assert index["Projection"] == {"ProjectionType": "ALL"}
    assert table["TimeToLiveSpecification"] == {"AttributeName": EXPIRES_AT, "Enabled": True}
    days = template["Parameters"]["JobHistoryDays"]
    field = TrackSettings.model_fields["history_days"]
    assert days["Default"] == field.default == 14
    for name in ("TrackFunction", "WebhookDeliveriesFunction"):
        env = template["Resources"][name]["Properties"]["Environment"]["Variables"]
        assert env["JOB_HISTORY_DAYS"] == {"Ref": "JobHistoryDays"} and env["JOB_METRICS"] == {"Ref": "JobMetrics"}
    assert template["Parameters"]["JobMetrics"]["Default"] == "off"


def test_the_collector_may_read_every_queue_of_a_runner_type_under_upstreams_names(template: dict[str, Any]) -> None:
    """The build queue, its dead-letter queue (FIFO or not) and the job-retry queue beside it all match the
    default patterns the collector's GetQueueAttributes is granted on; and nothing else is granted on them."""
    parameters = template["Parameters"]
    patterns = [parameters[p]["Default"] for p in ("WatchedQueueNamePattern", "WatchedJobRetryQueueNamePattern")]
    for build in ("gh-ci-linux-x64-queued-builds", "gh-ci-linux-x64-queued-builds.fifo"):
        paths = beside(build)
        for queue in (build, paths.job_retry, paths.dead_letter):
            assert queue is not None
            # IAM's '*' and '?' are fnmatch's, with no character classes in these patterns
            assert any(fnmatch.fnmatchcase(queue, pattern) for pattern in patterns), queue
    assert not fnmatch.fnmatchcase("gh-ci-webhook-events", patterns[1])  # not every queue
    for pattern in patterns:
        assert re.fullmatch(parameters["WatchedJobRetryQueueNamePattern"]["AllowedPattern"], pattern)


def test_the_bus_path_shows_its_blindness_in_minutes_and_keeps_what_it_cannot_apply(template: dict[str, Any]) -> None:
    track = template["Resources"]["TrackFunction"]["Properties"]
    invoke = track["EventInvokeConfig"]
    # Bounded: a throttled or failing event reaches the dead-letter queue (and its alarm) within minutes, and
    # while it is retried it stays inside the window in which the track stage takes it for live, not history.
    assert invoke["MaximumRetryAttempts"] <= 2
    assert invoke["MaximumEventAgeInSeconds"] <= min(900, HISTORY_AFTER.total_seconds())
    rule = track["Events"]["WorkflowJob"]["Properties"]
    assert rule["RetryPolicy"]["MaximumEventAgeInSeconds"] <= min(900, HISTORY_AFTER.total_seconds())
    assert track["DeadLetterQueue"]["TargetArn"] == {"Fn::GetAtt": ["TrackDeadLetterQueue", "Arn"]}
    alarms = resources(template, "AWS::CloudWatch::Alarm")
    on_track = {
        alarm["Properties"]["MetricName"]: alarm
        for alarm in alarms.values()
        if alarm["Properties"].get("Dimensions") == [{"Name": "FunctionName", "Value": {"Ref": "TrackFunction"}}]
    }
    assert set(on_track) == {"Errors", "Throttles", "AsyncEventAge"}
    for alarm in on_track.values():
        props = alarm["Properties"]
        assert alarm["Condition"] == "TrackFromBus"
        assert props["Period"] * props["EvaluationPeriods"] <= 300  # minutes, not Lambda's 6 hours
        assert props["TreatMissingData"] == "notBreaching"
    # AsyncEventAge is in milliseconds: paged well before the event would be dead-lettered.
    assert on_track["AsyncEventAge"]["Properties"]["Threshold"] < invoke["MaximumEventAgeInSeconds"] * 1000


def emitted_metrics(output: str) -> set[tuple[str, frozenset[tuple[str, str]]]]:
    """(metric, its dimensions and their values) for each EMF blob printed."""
    found = set()
    for blob in (json.loads(line) for line in output.splitlines() if '"_aws"' in line):
        for directive in blob["_aws"]["CloudWatchMetrics"]:
            for names in directive["Dimensions"]:
                for metric in directive["Metrics"]:
                    found.add((metric["Name"], frozenset((name, blob[name]) for name in names)))
    return found


def test_the_webhook_refusal_alarms_read_every_reason_the_webhook_counts(
    template: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    for reason in get_args(Refusal):
        record_webhook(WebhookResponse(status=400, message="", refused=reason), "Queuewatch", stack="s")
    record_webhook(WebhookResponse(status=202, message="queued", job_id=1), "Queuewatch", stack="s")
    emitted = emitted_metrics(capsys.readouterr().out)
    alarms = {name: template["Resources"][name]["Properties"] for name in ("WebhookSignatureRefusalsAlarm",
                                                                            "WebhookPayloadRefusalsAlarm")}  # fmt: skip
    read = set()
    for props in alarms.values():
        [returned] = [query for query in props["Metrics"] if query["ReturnData"]]
        for metric in alarm_metrics(props):
            dimensions = {d["Name"]: d["Value"] for d in metric["Dimensions"]}
            assert dimensions.pop("Stack") == {"Ref": "AWS::StackName"}
            read.add((metric["MetricName"], frozenset({("Stack", "s"), *dimensions.items()})))
        ids = {query["Id"] for query in props["Metrics"] if "MetricStat" in query}
        assert ids <= set(re.findall(r"[a-z]\w*", returned["Expression"]))  # every metric counts in the rate
    assert read == emitted  # each reason the webhook counts is judged, under exactly its dimensions
    signature = alarms["WebhookSignatureRefusalsAlarm"]["AlarmDescription"]
    assert "WebhookSecretArn" in signature and "Secrets Manager" in signature  # the parameter and the fix
    assert "Content type" in alarms["WebhookPayloadRefusalsAlarm"]["AlarmDescription"]
    webhook_env = template["Resources"]["WebhookFunction"]["Properties"]["Environment"]["Variables"]
    assert webhook_env["STACK_NAME"] == {"Ref": "AWS::StackName"}  # the Stack the alarms read


def test_the_slo_digest_is_off_unless_its_schedule_is_given_and_tracking_is_on(template: dict[str, Any]) -> None:
    assert template["Parameters"]["SloDigestSchedule"]["Default"] == ""
    assert template["Conditions"]["SendsSloDigest"] == {
        "Fn::And": [{"Condition": "Tracking"}, {"Fn::Not": [{"Fn::Equals": [{"Ref": "SloDigestSchedule"}, ""]}]}]
    }
    digest = {name for name, r in template["Resources"].items() if r.get("Condition") == "SendsSloDigest"}
    assert digest == {"DigestFunction", "DigestRole", "DigestLogGroup", "DigestErrorsAlarm"}
    function = template["Resources"]["DigestFunction"]["Properties"]
    assert function["Events"]["Digest"]["Properties"]["Schedule"] == {"Ref": "SloDigestSchedule"}
    assert function["EventInvokeConfig"]["MaximumRetryAttempts"] == 0  # a retry would send a team's digest twice
    env = function["Environment"]["Variables"]
    assert (
        env["CHAT_TOPIC_ARN"]
        == template["Resources"]["EvaluateFunction"]["Properties"]["Environment"]["Variables"]["CHAT_TOPIC_ARN"]
    )
    assert "ALERT_TOPIC_ARN" not in env  # never the pager's topic


def test_the_job_history_parameter_says_what_an_slo_needs_and_what_a_day_of_it_costs(template: dict[str, Any]) -> None:
    from queuewatch_cli.commands.check_config.slos import history_usd_a_month

    described = " ".join(template["Parameters"]["JobHistoryDays"]["Description"].split())
    assert "An SLO needs its window's days and one more (a 28-day SLO: 29)" in described
    assert f"about ${history_usd_a_month(50_000, 1):.3f} a month for each day kept at 50,000 jobs a day" in described


def test_the_autoscalers_prefix_alone_tracks_from_its_bus_and_reads_only_its_matcher_config(
    template: dict[str, Any],
) -> None:
    conditions = template["Conditions"]
    assert conditions["TrackFromBus"] == {
        "Fn::Or": [{"Condition": "HasAutoscalerPrefix"}, {"Condition": "HasBusOverride"}]
    }
    assert conditions["HasAutoscalerPrefix"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "AutoscalerPrefix"}, ""]}]}
    env = template["Resources"]["TrackFunction"]["Properties"]["Environment"]["Variables"]
    assert env["AUTOSCALER_PREFIX"] == {"Ref": "AutoscalerPrefix"}
    assert env["MATCHER_CONFIG_PATH"] == {"Ref": "AutoscalerMatcherConfigPath"}
    [read] = [
        statement
        for policy in template["Resources"]["TrackRole"]["Properties"]["Policies"]
        for condition, statement in statements(policy["PolicyDocument"])
        if condition == "ReadsMatcherConfig"
    ]
    granted = resolve(read["Resource"], {"AutoscalerPrefix": "ci"}, {"HasMatcherConfigPath": False})
    base = "arn:<AWS::Partition>:ssm:*:<AWS::AccountId>:parameter/github-action-runners/ci/webhook/"
    assert fnmatch.fnmatchcase(base + "runner-matcher-config", granted)
    assert fnmatch.fnmatchcase(base + "runner-matcher-config-3", granted)
    # The GitHub App's key and id live under the same prefix: never readable.
    assert not fnmatch.fnmatchcase(base.replace("/webhook/", "/app/") + "github_app_key_base64", granted)
    assert not fnmatch.fnmatchcase(base + "github_app_webhook_secret", granted)


def test_the_nested_applications_take_every_parameter_they_declare_and_hold_no_function() -> None:
    """Tracking's and the digest's tables, queues, log groups, roles and alarms are nested stacks (templates/); the
    rest of the tests read them written into the stack (support.load_template). CloudFormation refuses a nested
    stack given a parameter it does not declare, or missing one without a default; the functions stay in
    template.yaml, where `sam local invoke` finds their layers."""
    written = load_template_as_written()["Resources"]  # its loops, lists, are no application
    kind = "AWS::Serverless::Application"
    applications = {name: r for name, r in written.items() if isinstance(r, dict) and r["Type"] == kind}
    assert {name: r["Properties"]["Location"] for name, r in applications.items()} == {
        "Tracking": "templates/tracking.yaml",
        "Digest": "templates/digest.yaml",
    }
    for name, application in applications.items():
        text = (REPO_ROOT / application["Properties"]["Location"]).read_text(encoding="utf-8")
        nested = yaml.load(text, Loader=CloudFormationLoader)
        assert set(nested["Parameters"]) == set(application["Properties"]["Parameters"]), name
        assert "Transform" not in nested, name  # plain CloudFormation: the stack's CAPABILITY_IAM is all it needs
        kinds = {r["Type"] for r in nested["Resources"].values()}
        assert not {kind for kind in kinds if "Lambda" in kind or "Serverless" in kind}, (name, kinds)
        # Names and alarms carry the parent's name, which the key's and topics' policies admit: a nested stack's
        # own name is the parent's with the application's and a suffix added.
        assert "AWS::StackName" not in text, name
        assert nested["Parameters"]["StackName"] == {"Type": "String"}
        assert application["Properties"]["Parameters"]["StackName"] == {"Ref": "AWS::StackName"}
