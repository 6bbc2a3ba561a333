"""A bad-input corpus for job specs: option injection, control characters, NUL bytes and
silent coercions are refused naming the field (API), and `autoresearch jobs submit` exits 2
without a traceback before any daemon is contacted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from click.testing import CliRunner

from autoresearch.cli import _register, app
from compute import JobSpec
from compute.backends.local import attempt_script

_register()
runner = CliRunner()

REPO = Path(__file__).resolve().parents[2]

API_CASES = {
    "env key -i": ({"env": {"-i": "1"}}, "env", "must not start with '-'"),
    "env key with a newline": ({"env": {"A\nB": "1"}}, "env", "control character"),
    "env value with a NUL": ({"env": {"A": "x\x00y"}}, "env", "NUL byte"),
    "label key with a newline": ({"labels": {"team\nowner": "x"}}, "labels", "control character"),
    "label key -x": ({"labels": {"-x": "1"}}, "labels", "must not start with '-'"),
    "NUL in argv": ({"argv": ["python", "train.py\x00--evil"]}, "argv", "argv[1] 'train.py\\x00--evil' contains a NUL"),
    "NUL in a shell string": ({"argv": "echo a\x00b", "shell": True}, "argv", "NUL byte"),
    "NUL in cwd": ({"cwd": "/tmp/a\x00b"}, "cwd", "NUL byte"),
    "gpus true": ({"resources": {"gpus": True}}, "resources.gpus", "integer"),
    "gpus as a string": ({"resources": {"gpus": "2"}}, "resources.gpus", "integer"),
    "priority true": ({"priority": True}, "priority", "not a boolean"),
    "max_retries as a string": ({"max_retries": "3"}, "max_retries", "integer"),
    "preemptible as a string": ({"preemptible": "no"}, "preemptible", "boolean"),
    "time limit NaN": ({"time_limit_s": float("nan")}, "time_limit_s", "finite"),
    "time limit infinite": ({"time_limit_s": float("inf")}, "time_limit_s", "finite"),
    # issue 33 item 8: labels are bounded
    "10,000 labels": ({"labels": {f"k{i}": "v" for i in range(10_000)}}, "labels", "10000 labels, over the limit of 64"),
    "a label key of 10,000 characters": ({"labels": {"k" * 10_000: "v"}}, "labels", "10000 characters, over the limit of 128"),
    "a label value of 100,000 characters": ({"labels": {"team": "v" * 100_000}}, "labels",
                                            "the value of label 'team' is 100000 characters, over the limit of 1024"),
    "secret name with a space": ({"secret_env": ["HF TOKEN"]}, "secret_env", "must be a variable name"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(API_CASES))
def test_the_api_refuses_naming_the_field(case: str) -> None:
    fields, field, expected = API_CASES[case]
    with pytest.raises(ValidationError) as info:
        JobSpec.model_validate({"argv": ["python", "train.py"], **fields})
    text = str(info.value)
    assert text.splitlines()[1].startswith(field) and expected in text, text


def test_odd_env_names_cannot_become_env_options(tmp_path: Path) -> None:
    script = attempt_script(["true"], {"A.B": "1"}, str(tmp_path), tmp_path / "log", tmp_path / "pid", tmp_path / "x")
    assert "set -- env -- A.B=1 true" in script  # `--` ends env(1)'s options before any name


CLI_CASES = {
    "priority true": (["--priority", "true"], "unknown priority 'true'"),
    "gpus true": (["--gpus", "true"], "Invalid value for '--gpus'"),
    "label key with a newline": (["--label", "team\nowner=x"], "labels: Value error, key 'team\\nowner' contains a control"),
    "label key -x": (["--label", "-x=1"], "must not start with '-'"),
    "time limit NaN": (["--time-limit", "nan"], "time_limit_s"),
    "negative grace": (["--grace", "-1"], "grace_s"),
    "65 labels": ([a for i in range(65) for a in ("--label", f"k{i}=v")], "65 labels, over the limit of 64"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CLI_CASES))
def test_jobs_submit_exits_2_without_a_traceback(case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    options, expected = CLI_CASES[case]
    monkeypatch.setenv("AUTORESEARCH_HOME", str(tmp_path / "home"))
    result = runner.invoke(app, ["jobs", "submit", *options, "--", "python", "train.py"], env={"COLUMNS": "400"})
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert expected in " ".join(result.stderr.split()), result.stderr
    assert not (tmp_path / "home" / "compute").exists()  # refused before a daemon was started


def test_jobs_submit_in_its_own_process(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "from autoresearch.cli import main; main()", "jobs", "submit", "--label", "a\nb=1",
         "--", "python", "train.py"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO), "AUTORESEARCH_HOME": str(tmp_path / "home"),
                           "COLUMNS": "400"},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr and "control character" in done.stderr
