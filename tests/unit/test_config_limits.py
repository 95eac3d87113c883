"""Configs built to hurt: alias bombs, deep nesting, huge or non-UTF-8 files, durations that overflow,
patterns that match nothing, fleets past what one stack is sized for. Each is refused with the file,
the line, the key, what was found and what was expected; none hangs or crashes the loader."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from queuewatch.base.durations import parse_duration
from queuewatch.config.limits import MAX_BYTES, MAX_DEPTH, MAX_RUNNER_TYPES
from queuewatch.config.load import ConfigError, load_config, parse_config

REPO_ROOT = Path(__file__).resolve().parents[2]
SHIPPED = REPO_ROOT / "config" / "queuewatch.yaml"

HEAD = "version: 1\nrunner_types:\n  - {name: linux.2xlarge, queue: {name: gh-ci-linux-2xlarge-queued-builds}}\n"
RULES = "rules:\n  - {name: jobs-queueing, team: ci-infra, thresholds: {queue_time: 1m, queue_size: 0}}\n"


def billion_laughs() -> str:
    """Ten levels of ten aliases each: 600 bytes that expand to 10**10 strings."""
    lines = ["version: 1", 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    lines += ["rules:", "  - {name: jobs-queueing, team: ci-infra, match: *a9, thresholds: {queue_size: 0}}"]
    return "\n".join(lines) + "\n"


def problems(text: str) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="qw.yaml")
    rendered = str(caught.value).splitlines()
    assert rendered[0].startswith("qw.yaml: ") and "the config was not applied" in rendered[0]
    return [line.strip() for line in rendered[1:]]


def limit_memory() -> None:
    """Run in the child: 1 GiB of address space, so a loader without the bound fails fast instead of
    taking the machine's memory."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def check_config(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "queuewatch_cli", "check-config", *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=120,  # a guard against a hang, not a speed target
        preexec_fn=limit_memory,
        check=False,
    )


def test_check_config_refuses_billion_laughs_and_goes_on_to_the_next_file(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(billion_laughs())
    done = check_config(bomb, SHIPPED)
    assert done.returncode == 1
    assert f"{bomb}:7: a5: found aliases that expand this to over 500,000 nodes" in done.stderr
    assert f"{SHIPPED}: OK" in done.stdout


def test_an_alias_bomb_is_refused_at_the_anchor_that_crosses_the_bound() -> None:
    [problem] = problems(billion_laughs())
    assert problem.startswith("qw.yaml:7: a5: found aliases that expand this to over 500,000 nodes, expected at most")


def test_aliases_that_share_a_block_are_fine() -> None:
    shared = "x-gpu: &gpu {queue_time: {namespace: GitHub Runners, metric: QueuedMinutes, unit: minutes}}\n"
    text = (
        "version: 1\ndefaults: {signals: *gpu}\n".replace("*gpu", "{}")
        + "runner_types:\n"
        + "".join(f"  - {{name: gpu.t{i}, queue: {{name: q-{i}}}, signals: *gpu}}\n" for i in range(200))
        + RULES
    )
    with pytest.raises(ConfigError, match="unknown key 'x-gpu'"):  # the anchor's own key is unknown ...
        parse_config(shared + text)
    config = parse_config(
        text.replace("runner_types:\n", "runner_types:\n  - {name: a, queue: {name: a}, signals: &gpu {}}\n")
    )
    assert len(config.runner_types) == 201  # ... but aliases themselves load


def test_a_recursive_alias_is_refused() -> None:
    assert problems(HEAD + "x: &loop [*loop]\n" + RULES) == [
        "qw.yaml:4: x[0]: found an alias inside the anchor it refers to, expected no recursive aliases"
    ]


def test_nesting_past_the_bound_is_refused_with_its_line() -> None:
    deep = "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5)
    [problem] = problems(HEAD + RULES + f"x: {deep}\n")
    assert problem.startswith("qw.yaml:6: x") and f"expected at most {MAX_DEPTH}" in problem


@pytest.mark.parametrize("shape", ["[" * 100_000 + "]" * 100_000, "\n" + "- " * 100_000 + "x"], ids=["flow", "block"])
def test_nesting_that_would_overflow_libyamls_stack_is_refused_before_composing(tmp_path: Path, shape: str) -> None:
    deep = tmp_path / "deep.yaml"
    deep.write_text(HEAD + RULES + f"x: {shape}\n")
    done = check_config(deep, SHIPPED)  # in a child: without the bound, libyaml segfaults
    assert (done.returncode, f"{SHIPPED}: OK" in done.stdout) == (1, True)
    assert f"{deep}:" in done.stderr and "expected at most 64" in done.stderr


def test_a_file_over_the_size_cap_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_text(HEAD + RULES + "#" * MAX_BYTES + "\n")
    with pytest.raises(ConfigError) as caught:
        load_config(big)
    assert f"{big}: (top level): found a file of {big.stat().st_size:,} bytes, expected at most 4,194,304" in str(
        caught.value
    )


def test_a_non_utf8_file_names_its_line_and_check_config_goes_on(tmp_path: Path) -> None:
    latin = tmp_path / "latin1.yaml"
    latin.write_bytes((HEAD + "  - {name: caf\xe9, queue: {name: q}}\n" + RULES).encode("latin-1"))
    with pytest.raises(ConfigError) as caught:
        load_config(latin)
    assert f"{latin}:4: (top level): found byte(s) e9 at column 15, expected UTF-8 text" in str(caught.value)
    done = check_config(latin, SHIPPED)
    assert (done.returncode, f"{SHIPPED}: OK" in done.stdout, "Traceback" in done.stderr) == (1, True, False)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ("defaults: {metric_lookback: 9999999d}\n", "defaults.metric_lookback: found '9999999d', expected at most 366d"),
        ("defaults: {metric_lookback: 4h}\n", "defaults.metric_lookback: found 4h, expected at most 3h: CloudWatch"),
        ("defaults: {metric_lookback: 30s}\n", "defaults.metric_lookback: found 30s, expected at least 1m"),
        ("defaults: {rule: {for: 99999999999d}}\n", "defaults.rule.for: found '99999999999d', expected at most 366d"),
        ("defaults: {rule: {for: 25h}}\n", "defaults.rule.for: found 25h, expected at most 24h"),
        ("defaults: {rule: {keep_firing_for: 2d}}\n", "defaults.rule.keep_firing_for: found 48h, expected at most 24h"),
        ("defaults: {rule: {repeat_interval: 8d}}\n", "defaults.rule.repeat_interval: found 192h, expected at most 168h"),
        ("defaults: {rule: {thresholds: {queue_time: 25h}}}\n", "defaults.rule.thresholds.queue_time: found 25h, expected at most 24h: GitHub cancels"),
        ("monitor: {for: 2d}\n", "monitor.for: found 48h, expected at most 24h"),
        ("monitor: {repeat_interval: 30s}\n", "monitor.repeat_interval: found 30s, expected at least 1m"),
        ("defaults: {triage: {window: 99999999999d}}\n", "defaults.triage.window: found '99999999999d', expected at most 366d"),
        ("defaults: {signals: {busy_runners: {namespace: N, metric: M, period: 2h}}}\n", "defaults.signals.busy_runners.period: found 7200s, expected 1s, 5s, 10s, 30s or a multiple of 60s up to 1h"),
        ("defaults: {rule: {for: '" + "9" * 5000 + "'}}\n", "defaults.rule.for: 999999999999...: add a unit, such as"),
    ],
    ids=[
        "overflowing-lookback", "lookback-past-cloudwatch", "lookback-under-a-minute", "overflowing-for", "for-past-a-day",
        "keep-firing-past-a-day", "repeat-past-a-week", "queue-time-past-githubs-cancel", "monitor-for", "monitor-repeat",
        "overflowing-triage-window", "period-past-an-hour", "five-thousand-digits",
    ],
)  # fmt: skip
def test_every_duration_is_bounded_and_the_error_names_the_field(edit: str, expected: str) -> None:
    found = problems(HEAD + RULES + edit)
    assert any(expected in problem for problem in found), found


def test_each_bound_itself_is_accepted() -> None:
    config = parse_config(
        HEAD
        + RULES
        + "defaults: {metric_lookback: 3h, rule: {for: 24h, keep_firing_for: 24h, repeat_interval: 7d,"
        + " thresholds: {queue_time: 24h}}}\nmonitor: {for: 24h, repeat_interval: 7d}\n"
    )
    assert config.defaults.metric_lookback == 3 * 3600
    assert (config.resolved_rules[0].pending_for, config.resolved_rules[0].repeat_interval) == (86400, 7 * 86400)


def test_no_duration_parses_to_one_that_overflows_a_date() -> None:
    for text in ("99999999999d", "9" * 5000, "9" * 13 + "s"):
        with pytest.raises(ValueError, match=r"expected|add a unit"):
            parse_duration(text)


DISCOVERY = "discovery:\n  - {queue_name_pattern: 'gh-ci-{runner_type}-queued-builds'}\n"


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ("match: ['linux\\..*']", "rules[0].match[0]: found 'linux\\\\..*', which can match no runner type: '\\\\' is in no"),
        ("match: ['^gpu$']", "rules[0].match[0]: found '^gpu$', which can match no runner type: '^'"),
        ("match: ['(linux|gpu).*']", "it looks like a regular expression"),
        ("match: ['linux.+']", "'+' is in no runner type name"),
        ("match: ['']", "rules[0].match[0]: found an empty pattern"),
        ("match: ['linux[']", "rules[0].match[0]: found 'linux[': '[' opens a set that never closes"),
        ("exclude: ['*', 'a b']", "rules[0].exclude[1]: found 'a b', which can match no runner type: ' '"),
        ("match: ['x[/]']", "the set '[/]' admits no character a runner type has"),
    ],
    ids=["regex-dot-star", "anchors", "alternation", "plus", "empty", "unclosed-set", "space", "impossible-set"],
)  # fmt: skip
def test_a_rule_pattern_that_can_match_nothing_is_refused_even_with_discovery(rule: str, expected: str) -> None:
    text = (
        "version: 1\n"
        + DISCOVERY
        + f"rules:\n  - {{name: jobs-queueing, team: ci-infra, {rule}, thresholds: {{queue_size: 0}}}}\n"
    )
    assert any(expected in p for p in problems(text)), problems(text)


@pytest.mark.parametrize("key", ["match", "exclude"])
def test_a_discovery_pattern_that_can_match_nothing_is_refused(key: str) -> None:
    text = DISCOVERY.replace("}\n", f", {key}: ['linux\\..*']}}\n")
    [problem] = problems("version: 1\n" + text + RULES)
    assert problem.startswith(f"qw.yaml:3: discovery[0].{key}[0]: found 'linux\\\\..*', which can match no runner type")


@pytest.mark.parametrize("pattern", ["linux.*", "*", "gpu-?", "[a-z]*.gpu", "[!.]*", "linux.2xlarge"])
def test_globs_that_can_match_are_accepted(pattern: str) -> None:
    config = parse_config(
        "version: 1\n" + DISCOVERY + RULES.replace("name: jobs-queueing", f"name: r, match: ['{pattern}']")
    )
    assert config.rules[0].match == [pattern]


def test_a_fleet_past_one_stack_is_refused_before_its_entries_are_validated() -> None:
    entries = "".join(f"  - not a runner type {i}\n" for i in range(MAX_RUNNER_TYPES + 1))
    assert problems("version: 1\nrunner_types:\n" + entries + RULES) == [
        f"qw.yaml:2: runner_types: found 5,001 runner types, expected at most {MAX_RUNNER_TYPES:,}: one stack is sized "
        "for that many; split the fleet across stacks (docs/SCALE_OUT.md)"
    ]
