"""template.yaml's Fn::ForEach loops, unrolled for the tests as the AWS::LanguageExtensions transform does, and its
nested applications written into it as one stack."""

from __future__ import annotations

from typing import Any

import pytest
from support import load_template_as_written

from queuewatch_cli.common.template import expand_loops, inline_applications

ALARM = {
    "Type": "AWS::CloudWatch::Alarm",
    "Properties": {
        "MetricName": {"Ref": "Metric"},
        "Name": {"Fn::Sub": "${Stage}-${Metric}"},
        "AlarmName": {"Fn::Sub": "${AWS::StackName}-${Stage}"},
        "Words": "${Stage} is only filled in where CloudFormation fills it",
    },
}


def test_a_loop_in_a_loop_makes_one_resource_per_pair_with_both_identifiers_filled_in() -> None:
    template: dict[str, Any] = {
        "Resources": {
            "Fn::ForEach::Outer": [
                "Stage",
                ["Collect", "Evaluate"],
                {"Fn::ForEach::Inner": ["Metric", ["Errors", "Throttles"], {"${Stage}${Metric}Alarm": ALARM}]},
            ],
            "Other": {"Type": "AWS::SNS::Topic"},
        }
    }
    resources = expand_loops(template)["Resources"]
    assert list(resources) == [
        "CollectErrorsAlarm", "CollectThrottlesAlarm", "EvaluateErrorsAlarm", "EvaluateThrottlesAlarm", "Other",
    ]  # fmt: skip
    assert resources["EvaluateThrottlesAlarm"]["Properties"] == {
        "MetricName": "Throttles",
        "Name": "Evaluate-Throttles",
        "AlarmName": {"Fn::Sub": "${AWS::StackName}-Evaluate"},
        "Words": "${Stage} is only filled in where CloudFormation fills it",
    }


def test_find_in_map_of_literal_keys_is_looked_up_and_falls_back_to_its_default() -> None:
    template: dict[str, Any] = {
        "Mappings": {"Words": {"CollectErrors": {"Name": "collect-errors"}}},
        "Resources": {
            "Fn::ForEach::Alarms": [
                "Metric",
                ["Errors"],
                {
                    "Collect${Metric}Alarm": {
                        "Name": {"Fn::FindInMap": ["Words", {"Fn::Sub": "Collect${Metric}"}, "Name"]},
                        "Stat": {
                            "Fn::FindInMap": ["Words", {"Fn::Sub": "Collect${Metric}"}, "Stat", {"DefaultValue": "Sum"}]
                        },
                        "Region": {"Fn::FindInMap": ["Words", {"Ref": "AWS::Region"}, "Name"]},  # not literal: kept
                    }
                },
            ]
        },
    }
    alarm = expand_loops(template)["Resources"]["CollectErrorsAlarm"]
    assert alarm["Name"] == "collect-errors" and alarm["Stat"] == "Sum"
    assert alarm["Region"] == {"Fn::FindInMap": ["Words", {"Ref": "AWS::Region"}, "Name"]}


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        ({"Fn::ForEach::Twice": ["X", ["A", "A"], {"${X}Topic": {}}]}, "ATopic is made twice"),
        ({"Fn::ForEach::Clash": ["X", ["A"], {"${X}Topic": {}}], "ATopic": {}}, "ATopic is made twice"),
        ({"Fn::ForEach::Late": ["X", {"Ref": "Accounts"}, {"${X}Topic": {}}]}, "only a literal list of strings"),
        ({"Fn::ForEach::Short": ["X", ["A"]]}, "a loop is [identifier, collection, fragment]"),
    ],
)
def test_what_cannot_be_unrolled_is_refused_with_the_loop_named(resources: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match="Resources") as refused:
        expand_loops({"Resources": resources})
    assert message in str(refused.value)


def test_the_template_writes_its_repeated_alarms_as_loops_and_each_unrolls_to_its_logical_id() -> None:
    written = load_template_as_written()
    assert written["Transform"] == ["AWS::LanguageExtensions", "AWS::Serverless-2016-10-31"]  # loops first
    loops = [key for key in written["Resources"] if key.startswith("Fn::ForEach::")]
    assert loops == ["Fn::ForEach::WebhookFunctionAlarms", "Fn::ForEach::TrackFunctionAlarms",
                     "Fn::ForEach::CoreFunctionAlarms"]  # fmt: skip
    made = set(expand_loops(written)["Resources"]) - set(written["Resources"])
    assert made == {
        "CollectErrorsAlarm", "CollectThrottlesAlarm", "EvaluateErrorsAlarm", "EvaluateThrottlesAlarm",
        "TrackErrorsAlarm", "TrackThrottlesAlarm", "TrackEventAgeAlarm", "WebhookErrorsAlarm", "WebhookThrottlesAlarm",
    }  # fmt: skip


CHILD = {
    "Parameters": {"StackName": {"Type": "String"}, "KeyArn": {"Type": "String"}, "Prefix": {"Type": "String"}},
    "Conditions": {"HasPrefix": {"Fn::Not": [{"Fn::Equals": [{"Ref": "Prefix"}, ""]}]}},
    "Resources": {
        "Logs": {
            "Type": "AWS::Logs::LogGroup",
            "Properties": {"LogGroupName": {"Fn::Sub": "/q/${StackName}/track"}, "KmsKeyId": {"Ref": "KeyArn"}},
        },
        "Queue": {"Type": "AWS::SQS::Queue", "Condition": "HasPrefix"},
    },
    "Outputs": {"LogsArn": {"Value": {"Fn::GetAtt": ["Logs", "Arn"]}}, "QueueUrl": {"Value": {"Ref": "Queue"}}},
}


def parent(**conditions: Any) -> dict[str, Any]:
    return {
        "Conditions": {"Tracking": {"Fn::Equals": ["a", "a"]}, **conditions},
        "Resources": {
            "Key": {"Type": "AWS::KMS::Key"},
            "Child": {
                "Type": "AWS::Serverless::Application",
                "Condition": "Tracking",
                "Properties": {
                    "Location": "templates/child.yaml",
                    "Parameters": {
                        "StackName": {"Ref": "AWS::StackName"},
                        "KeyArn": {"Fn::GetAtt": ["Key", "Arn"]},
                        "Prefix": {"Ref": "AutoscalerPrefix"},
                    },
                },
            },
            "Role": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "Logs": {"Fn::GetAtt": ["Child", "Outputs.LogsArn"]},
                    "Streams": {"Fn::Sub": "${Child.Outputs.LogsArn}:*"},
                    "Queue": {"Fn::GetAtt": ["Child", "Outputs.QueueUrl"]},
                },
            },
        },
    }


def test_a_nested_application_is_written_into_its_parent_as_if_it_had_never_been_nested() -> None:
    read = {"templates/child.yaml": CHILD}.__getitem__
    inlined = inline_applications(parent(), read)
    resources = inlined["Resources"]
    assert list(resources) == ["Key", "Logs", "Queue", "Role"]
    # the parameters as the parent passes them, in a Sub's text too
    assert resources["Logs"]["Properties"] == {
        "LogGroupName": {"Fn::Sub": "/q/${AWS::StackName}/track"},
        "KmsKeyId": {"Fn::GetAtt": ["Key", "Arn"]},
    }
    # a resource without a condition of its own exists where its application does
    assert resources["Logs"]["Condition"] == "Tracking" and resources["Queue"]["Condition"] == "HasPrefix"
    assert inlined["Conditions"]["HasPrefix"] == {"Fn::Not": [{"Fn::Equals": [{"Ref": "AutoscalerPrefix"}, ""]}]}
    # the parent's reads of the application's outputs, as the resources they name
    assert resources["Role"]["Properties"] == {
        "Logs": {"Fn::GetAtt": ["Logs", "Arn"]},
        "Streams": {"Fn::Sub": "${Logs.Arn}:*"},
        "Queue": {"Ref": "Queue"},
    }


def test_a_condition_of_the_same_name_must_read_the_same_and_a_resource_is_made_once() -> None:
    read = {"templates/child.yaml": CHILD}.__getitem__
    same = {"Fn::Not": [{"Fn::Equals": [{"Ref": "AutoscalerPrefix"}, ""]}]}
    assert inline_applications(parent(HasPrefix=same), read)["Conditions"]["HasPrefix"] == same
    with pytest.raises(ValueError, match="condition HasPrefix reads otherwise"):
        inline_applications(parent(HasPrefix={"Fn::Equals": ["a", "b"]}), read)
    twice = parent()
    twice["Resources"]["Logs"] = {"Type": "AWS::Logs::LogGroup"}
    with pytest.raises(ValueError, match="Logs is made twice"):
        inline_applications(twice, read)
