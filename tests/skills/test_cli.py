"""`autoresearch skills list|call` from the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import autoresearch.cli.skills_cmds  # noqa: F401 - registers `skills` (only ours: other groups may be mid-edit)
from autoresearch.cli import app
from compute import Client
from tracking import TrackingConfig
from skills.builtin import builtin_registry

runner = CliRunner()


def test_list_prints_names_and_definitions() -> None:
    result = runner.invoke(app, ["skills", "list"])
    assert result.exit_code == 0
    assert [line.split()[0] for line in result.stdout.splitlines() if line] == builtin_registry().names()

    tooldefs = json.loads(runner.invoke(app, ["skills", "list", "--json"]).stdout)
    assert [t["name"] for t in tooldefs] == builtin_registry().names()
    openai = json.loads(runner.invoke(app, ["skills", "list", "--json", "--format", "openai"]).stdout)
    assert openai[0]["type"] == "function" and openai[0]["function"]["name"] == "submit_job"
    anthropic = json.loads(runner.invoke(app, ["skills", "list", "--json", "--format", "anthropic"]).stdout)
    assert set(anthropic[0]) == {"name", "description", "input_schema"}
    bad = runner.invoke(app, ["skills", "list", "--json", "--format", "xml"])
    assert bad.exit_code == 2 and "use tooldef, openai, anthropic or mcp" in bad.stderr
    mcp = json.loads(runner.invoke(app, ["skills", "list", "--json", "--format", "mcp"]).stdout)
    assert set(mcp[0]) == {"name", "description", "inputSchema", "annotations"}


@pytest.fixture
def cli_args(compute_client: Client, tracking: TrackingConfig) -> list[str]:
    return ["--home", str(compute_client.home), "--tracking-uri", tracking.tracking_uri]


def test_call_prints_output_json(cli_args: list[str], tmp_path: Path) -> None:
    arguments = {"argv": [sys.executable, "-c", "print(42)"], "cwd": str(tmp_path)}
    result = runner.invoke(app, ["skills", "call", "submit_job", "--json", json.dumps(arguments), *cli_args])
    assert result.exit_code == 0, result.stderr
    job_id = json.loads(result.stdout)["job"]["id"]
    waited = runner.invoke(
        app, ["skills", "call", "wait_for_jobs", "--json", "-", *cli_args],
        input=json.dumps({"job_ids": [job_id], "since": {job_id: "pending"}, "timeout_s": 60}),
    )  # fmt: skip
    assert waited.exit_code == 0 and job_id in json.loads(waited.stdout)["states"]


@pytest.mark.parametrize(
    ("skill", "arguments", "error"),
    [
        ("job_status", "{oops", "invalid_json"),
        ("job_status", '{"job_id": 5}', "invalid_arguments"),
        ("job_status", '{"job_id": "abc"}', "not_found"),
        ("launch_rocket", "{}", "unknown_skill"),
    ],
)
def test_failed_calls_print_the_typed_error_and_exit_2(cli_args: list[str], skill: str, arguments: str, error: str) -> None:
    result = runner.invoke(app, ["skills", "call", skill, "--json", arguments, *cli_args])
    assert result.exit_code == 2
    printed = json.loads(result.stdout)
    assert printed["error"] == error
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
