"""The README's deploy commands, read from the README and run as written, by make and the SAM CLI, against a moto
server.

Each `make deploy` line of the README's Deploy section runs in a copy of the repository's Makefile, template,
code and samconfig.toml, with the config staged as `make build` stages it; the source template stands in for
the built one (BUILT_TEMPLATE=template.yaml: `sam build` would need the network for the layer's dependencies,
so the source tree is packaged as it is), and the environments' queuewatch and SAM CLI are named (VENV, SAM).
SAM must accept the command line, resolve its managed bucket (`--resolve-s3`), upload every artifact and the
packaged template under the environment's prefix, and call CreateChangeSet with the capabilities and the
parameters the config decides. moto stops there: it answers CreateChangeSet with
NoSuchBucket, since it cannot read a template from the S3 URL SAM hands it; the test asserts that exact point,
so a moto that gets further fails here and the test can be taken further.

moto has one gap before that point, which the test fills: a stack it creates through a change set has no
Outputs, and SAM's managed-bucket stack is made that way, so SAM would refuse it as not its own. The test
creates that stack as SAM does on a first deploy (a bucket, its name as the `SourceBucket` output, SAM's tag)
with CreateStack, in each region the README deploys to.

It needs the SAM CLI's environment (`make venv-sam`, which `make lint` builds before `make test`):
`.venv-sam/bin/sam` in the repository, or the path in QUEUEWATCH_SAM_CLI.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest

from bench.motoserver import MotoServer
from queuewatch_cli.commands.build.build import stage_config

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
SAM_IN_README = ".venv-sam/bin/sam"
MAKE_DEPLOY = "make deploy"
NAMED_AUTOSCALER = "autoscaler: { prefix: gh-ci }"
DEPLOY_TIMEOUT_SECONDS = 300
NESTED = sorted((REPO / "templates").glob("*.yaml"))  # template.yaml's nested applications (Tracking, Digest)
MANAGED_STACK = "aws-sam-cli-managed-default"
GUIDED_QUESTION = "WebhookFunction Function Url has no authentication. Is this okay?"


def client(service: str, region: str, endpoint: str) -> Any:
    """A client of the moto server, with its fake credentials (a module fixture runs before the tests' own)."""
    session = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing", region_name=region)
    return session.client(service, endpoint_url=endpoint)  # type: ignore[call-overload]


def sam_cli() -> Path | None:
    given = os.environ.get("QUEUEWATCH_SAM_CLI")
    candidate = Path(given) if given else REPO / SAM_IN_README
    return candidate if candidate.is_file() else None


def deploy_section(readme: str) -> str:
    start = readme.index("\n## Deploy\n")
    end = readme.index("\n## ", start + 1)
    return readme[start:end]


def deploy_commands(section: str) -> list[str]:
    """Every `make deploy` command in the section's shell blocks, continuation lines joined, comments dropped."""
    commands = []
    for block in re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL):
        joined = block.replace("\\\n", " ")
        lines = [line.split(" #")[0].strip() for line in joined.splitlines()]
        commands += [line for line in lines if line.startswith(MAKE_DEPLOY)]
    return commands


@dataclass(frozen=True)
class Deploy:
    command: str
    stack_name: str
    region: str
    s3_prefix: str
    output: str
    returncode: int


def environment_of(argv: list[str], samconfig: dict[str, dict[str, dict[str, dict[str, object]]]]) -> dict[str, object]:
    name = next((word.removeprefix("DEPLOY_ENV=") for word in argv if word.startswith("DEPLOY_ENV=")), "default")
    assert name in samconfig, f"{name!r} is not an environment of samconfig.toml"
    return samconfig[name]["deploy"]["parameters"]


def create_managed_bucket_stack(endpoint: str, region: str) -> None:
    """SAM's managed stack as a first deploy makes it; by CreateStack: moto gives a change set's stack no Outputs."""
    template = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {"SamCliSourceBucket": {"Type": "AWS::S3::Bucket"}},
        "Outputs": {"SourceBucket": {"Value": {"Ref": "SamCliSourceBucket"}}},
    }
    client("cloudformation", region, endpoint).create_stack(
        StackName=MANAGED_STACK,
        TemplateBody=json.dumps(template),
        Tags=[{"Key": "ManagedStackSource", "Value": "AwsSamCli"}],
    )


def managed_bucket(endpoint: str, region: str) -> str:
    stack = client("cloudformation", region, endpoint).describe_stacks(StackName=MANAGED_STACK)["Stacks"][0]
    return str(next(output["OutputValue"] for output in stack["Outputs"] if output["OutputKey"] == "SourceBucket"))


@pytest.fixture(scope="module")
def deploys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MotoServer, list[Deploy]]]:
    sam = sam_cli()
    if sam is None:
        pytest.skip(f"no SAM CLI: {REPO / SAM_IN_README} is missing (make venv-sam) and QUEUEWATCH_SAM_CLI is unset")
    project = tmp_path_factory.mktemp("clone")
    for name in ("template.yaml", "samconfig.toml", "Makefile"):
        shutil.copy2(REPO / name, project / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for folder in ("functions", "layers", "templates"):
        shutil.copytree(REPO / folder, project / folder, ignore=ignore)
    # make build's first step, on the shipped config with its autoscaler named, as the README's user does
    shipped = (REPO / "config" / "queuewatch.yaml").read_text()
    assert NAMED_AUTOSCALER in shipped
    (project / "fleet.yaml").write_text(shipped.replace(f"# {NAMED_AUTOSCALER}", NAMED_AUTOSCALER))
    stage_config(project / "fleet.yaml", project / ".aws-sam" / "config")
    samconfig = tomllib.loads((project / "samconfig.toml").read_text())
    commands = deploy_commands(deploy_section(README.read_text()))
    with MotoServer() as moto:
        topic = client("sns", "us-east-1", moto.endpoint).create_topic(Name="queuewatch-use1-alerts")["TopicArn"]
        plans = []
        for command in commands:
            argv = shlex.split(command.replace("$TOPIC", topic))
            parameters = environment_of(argv, samconfig)
            tools = [f"VENV={sys.prefix}", f"SAM={sam}", "BUILT_TEMPLATE=template.yaml"]
            plans.append((command, ["make", "--no-print-directory", *argv[1:], *tools], parameters))
        for region in sorted({str(parameters["region"]) for _, _, parameters in plans}):
            create_managed_bucket_stack(moto.endpoint, region)
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(project),
            "AWS_ENDPOINT_URL": moto.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "SAM_CLI_TELEMETRY": "0",
        }

        def run(argv: list[str]) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                argv,
                cwd=project,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=DEPLOY_TIMEOUT_SECONDS,
                check=False,
            )

        with ThreadPoolExecutor(max_workers=len(plans) or 1) as pool:
            finished = list(pool.map(run, [argv for _, argv, _ in plans]))
        yield (
            moto,
            [
                Deploy(
                    command,
                    str(parameters["stack_name"]),
                    str(parameters["region"]),
                    str(parameters["s3_prefix"]),
                    result.stdout + result.stderr,
                    result.returncode,
                )
                for (command, _, parameters), result in zip(plans, finished, strict=True)
            ],
        )


def test_the_readme_deploys_one_stack_and_two_stacks_each_with_an_environment_of_samconfig() -> None:
    commands = deploy_commands(deploy_section(README.read_text()))
    assert len(commands) == 3, commands  # one stack; the two of "Several stacks"
    samconfig = tomllib.loads((REPO / "samconfig.toml").read_text())
    assert [str(environment_of(shlex.split(command), samconfig)["stack_name"]) for command in commands] == [
        "queuewatch",
        "queuewatch-use1",
        "queuewatch-euw1",
    ]


def test_make_deploy_passes_the_bucket_the_capabilities_the_environment_and_the_derived_parameters() -> None:
    if shutil.which("make") is None:
        pytest.fail("make is needed to read the deploy's recipe")
    recipe = subprocess.run(
        ["make", "-n", "--no-print-directory", "deploy", "DEPLOY_ENV=euw1", "PARAMETERS=ChatTopicArn=x"],
        cwd=REPO, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    [deploy] = [line for line in recipe.replace("\\\n", " ").splitlines() if " deploy " in line and "sam" in line]
    words = deploy.split()
    assert "--resolve-s3" in words and words[words.index("--capabilities") + 1] == "CAPABILITY_IAM", deploy
    assert words[words.index("--config-env") + 1] == "euw1", deploy
    assert words[words.index("--template-file") + 1] == ".aws-sam/build/template.yaml", deploy
    assert words[words.index("--parameter-overrides") + 1 :] == ["$derived", "ChatTopicArn=x"], deploy
    assert "queuewatch deploy-parameters .aws-sam/config/queuewatch.yaml" in recipe


@pytest.mark.parametrize("doc", [README, *sorted((REPO / "docs").glob("*.md"))], ids=lambda p: p.name)
def test_every_deploy_in_the_docs_is_make_deploy(doc: Path) -> None:
    """A bare `sam deploy` would miss the parameters the config decides (docs/SCALE_OUT.md's stacks included)."""
    text = doc.read_text()
    for block in re.findall(r"```sh\n(.*?)```", text, flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            assert "sam deploy" not in line, f"{doc.name}: {line.strip()}: write make deploy"


def test_the_guided_deploys_question_on_the_webhook_url_is_answered_in_the_readme() -> None:
    assert f"`{GUIDED_QUESTION}`" in " ".join(deploy_section(README.read_text()).split())


def test_sam_accepts_each_command_uploads_the_artifacts_and_stops_at_moto_create_change_set(
    deploys: tuple[MotoServer, list[Deploy]],
) -> None:
    moto, results = deploys
    assert len({deploy.stack_name for deploy in results}) == len(results), "each command deploys its own stack"
    for deploy in results:
        assert "Error: No such option" not in deploy.output and "Usage:" not in deploy.output, deploy.output
        assert "S3 Bucket not specified" not in deploy.output, deploy.output
        assert f"Stack name                   : {deploy.stack_name}" in deploy.output, deploy.output
        assert 'Capabilities                 : ["CAPABILITY_IAM"]' in deploy.output, deploy.output
        [overrides] = [line for line in deploy.output.splitlines() if "Parameter overrides" in line]
        assert '"AutoscalerPrefix": "gh-ci"' in overrides and '"WatchedAccountIds": ""' in overrides, overrides
        assert ('"ExistingAlertTopicArn": "arn:aws:sns:' in overrides) == (deploy.stack_name == "queuewatch-euw1")
        s3 = client("s3", deploy.region, moto.endpoint)
        bucket = managed_bucket(moto.endpoint, deploy.region)
        keys = [item["Key"] for item in s3.list_objects_v2(Bucket=bucket, Prefix=f"{deploy.s3_prefix}/")["Contents"]]
        uploaded = [
            s3.get_object(Bucket=bucket, Key=key)["Body"].read().decode() for key in keys if key.endswith(".template")
        ]
        # the stack's template, and its nested applications' (templates/), each uploaded and named by its URL
        [packaged] = [text for text in uploaded if "Transform:" in text]
        assert len(uploaded) == 1 + len(NESTED), keys
        located = re.findall(rf"Location: https?://\S+/{bucket}/{deploy.s3_prefix}/\w+\.template\n", packaged)
        assert len(located) == len(NESTED), packaged
        for artifact in ("CodeUri: s3://", "ContentUri: s3://"):
            assert artifact in packaged, f"{deploy.command}: the packaged template has no {artifact}"
        # every function's code and both layers: the code of collect, evaluate, track and the two layers
        assert len(keys) >= 5, keys
        # Where moto stops: CreateChangeSet, which cannot read the uploaded template. Everything before it ran.
        expected = (
            f"Error: Failed to create changeset for the stack: {deploy.stack_name}, An error occurred (NoSuchBucket) "
            "when calling the CreateChangeSet operation"
        )
        assert expected in deploy.output, deploy.output
        assert deploy.returncode == 2  # make's, for a recipe that failed
