"""`autoresearch config schema` and `autoresearch config check FILE`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from autoresearch.campaign import Campaign
from autoresearch.cli import _register, app
from tests.autoresearch.campaign.conftest import ISSUE_YAML

_register()
REPO = Path(__file__).resolve().parents[3]
runner = CliRunner()


def test_schema_is_the_campaign_json_schema() -> None:
    result = runner.invoke(app, ["config", "schema"])

    assert result.exit_code == 0, result.output
    schema = json.loads(result.stdout)
    assert schema == Campaign.model_json_schema()
    assert set(schema["properties"]) == {
        "name", "command", "cwd", "objective", "search_space", "budget", "compute", "policy", "tracking", "metrics",
        "code", "confirm", "approvals", "env", "data", "secret_env", "validity",
    }
    assert set(schema["required"]) == {"name", "command", "objective", "budget"}
    assert schema["additionalProperties"] is False
    budget = schema["$defs"]["Budget"]
    assert budget["additionalProperties"] is False and "deadline" in budget["properties"]
    assert budget["properties"]["max_trials"]["description"].startswith("Trials in all")
    priority = schema["$defs"]["ComputeSettings"]["properties"]["priority"]
    assert {"enum": ["idle", "low", "normal", "high", "urgent"]} in priority["anyOf"]


def test_check_prints_the_resolved_config(issue_file: Path, project: Path) -> None:
    result = runner.invoke(app, ["config", "check", str(issue_file), "--json"], env={"OPENAI_API_KEY": ""})

    assert result.exit_code == 0, result.output
    resolved = json.loads(result.stdout)
    assert resolved["cwd"] == str((project / "examples" / "digits").resolve())
    assert resolved["compute"]["priority"] == 50
    assert resolved["policy"]["sampler"] == "tpe" and resolved["budget"]["max_parallel"] == 4

    human = runner.invoke(app, ["config", "check", str(issue_file)], env={"OPENAI_API_KEY": ""})
    assert human.exit_code == 0
    assert "valid campaign config (policy kind resolves to optuna)" in human.stdout
    assert "cwd: " + str((project / "examples" / "digits").resolve()) in human.stdout


def test_check_of_a_bad_file_exits_2_with_one_paragraph(project: Path) -> None:
    bad = project / "bad.yaml"
    bad.write_text(ISSUE_YAML.replace("  priority: normal", "  priority: hihg"))
    line = ISSUE_YAML.splitlines().index("  priority: normal") + 1

    proc = subprocess.run(
        [sys.executable, "-c", "from autoresearch.cli import main; main()", "config", "check", str(bad)],
        capture_output=True, text=True, timeout=120, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
    )

    assert proc.returncode == 2
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    message = " ".join(proc.stderr.split())
    assert f"bad.yaml:{line}:3: compute.priority: unknown priority 'hihg'" in message
    assert "config check" in message


def test_check_warns_when_the_program_of_the_command_is_not_where_the_job_looks(project: Path) -> None:
    digits = project / "examples" / "digits"
    (digits / "train.sh").write_text("#!/bin/sh\necho val_accuracy: 1\n")
    (digits / "train.sh").chmod(0o755)
    path = project / "campaign.yaml"
    warnings = {}
    for argv0 in ("pythn", "train.sh", "./train.sh", "./trian.sh", "sh", "{activation}"):
        path.write_text(ISSUE_YAML.replace('["python", "train.py"', f'["{argv0}", "train.py"'))
        result = runner.invoke(app, ["config", "check", str(path)], env={"OPENAI_API_KEY": ""})
        assert result.exit_code == 0, result.output
        warnings[argv0] = result.stderr.strip()
    assert warnings["pythn"].startswith(f"warning: {path}: command not found: 'pythn' is not on the jobs' PATH")
    assert "it is in cwd: write ./train.sh" in warnings["train.sh"]
    assert f"command[0] './trian.sh' does not exist (looked up from cwd {digits.resolve()})" in warnings["./trian.sh"]
    assert warnings["./train.sh"] == warnings["sh"] == warnings["{activation}"] == ""

    path.write_text(ISSUE_YAML.replace('["python", "train.py"', '["pythn", "train.py"') + "env: {PATH: /nowhere}\n")
    assert "'pythn'" in runner.invoke(app, ["config", "check", str(path), "--json"]).stderr
    path.write_text(ISSUE_YAML.replace('["python", "train.py"', '["sh", "train.py"') + "env: {PATH: /nowhere}\n")
    assert "command not found: 'sh'" in runner.invoke(app, ["config", "check", str(path)]).stderr  # the job's PATH
