"""`objective.holdout` in the config: a code-edit campaign's holdout runs only fixed files, and
`config check` refuses one that names an editable or unlisted file with file:line:field."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autoresearch.campaign import load_campaign
from autoresearch.campaign.holdout import spearman

REPO = Path(__file__).resolve().parents[3]


def _project(tmp_path: Path, holdout_command: list[str]) -> Path:
    """train.py (editable), evaluation.py (fixed), holdout_eval.py and helper.py (neither), a config."""
    for name in ("train.py", "evaluation.py", "holdout_eval.py", "helper.py"):
        (tmp_path / name).write_text("print('loss: 1.0')\n")
    config = {
        "name": "holdout-check",
        "command": ["python", "train.py", "--seed", "{seed}"],
        "objective": {"metric": "loss", "mode": "min",
                      "holdout": {"command": holdout_command, "metric": "holdout_loss"}},
        "code": {"editable": ["train.py"], "fixed": ["evaluation.py"]},
        "budget": {"max_trials": 2},
    }  # fmt: skip
    path = tmp_path / "campaign.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _check(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from autoresearch.cli import main; main()", "config", "check", str(path)],
        capture_output=True, text=True, timeout=120, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip


def _line_of(path: Path, text: str) -> int:
    """The line of `text` inside the holdout section."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if "holdout:" in line)
    return next(i for i, line in enumerate(lines[start:], start + 1) if text in line)


@pytest.mark.parametrize(("script", "why"), [
    ("train.py", "train.py is editable (code.editable), so the policy could change its own holdout"),
    ("holdout_eval.py", "holdout_eval.py is not listed in code.fixed; a holdout must run fixed code"),
])  # fmt: skip
def test_config_check_refuses_a_holdout_that_runs_a_non_fixed_file(tmp_path: Path, script: str, why: str) -> None:
    path = _project(tmp_path, ["python", script, "--ckpt", "{checkpoint_dir}"])

    proc = _check(path)

    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = " ".join(proc.stderr.split())
    line = _line_of(path, f"- {script}")
    assert f"campaign.yaml:{line}:" in message and "objective.holdout.command[1]: " in message, message
    assert why in message


def test_a_holdout_of_fixed_files_with_its_placeholders_is_valid(tmp_path: Path) -> None:
    path = _project(tmp_path, ["python", "evaluation.py", "--ckpt={checkpoint_dir}", "--dir", "{trial_dir}"])

    campaign = load_campaign(path)

    assert campaign.objective.holdout is not None and campaign.objective.holdout.every is False
    assert campaign.objective.holdout.top_k == 3


def test_an_unknown_placeholder_in_the_holdout_is_refused_with_its_line(tmp_path: Path) -> None:
    path = _project(tmp_path, ["python", "evaluation.py", "{checkpoint}"])

    proc = _check(path)

    message = " ".join(proc.stderr.split())
    assert proc.returncode == 2
    assert f"campaign.yaml:{_line_of(path, '{checkpoint}')}:" in message
    assert "unknown placeholder {checkpoint}" in message and "checkpoint_dir" in message


def test_spearman_of_known_rankings() -> None:
    assert spearman([(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)]) == pytest.approx(1.0)
    assert spearman([(1.0, 3.0), (2.0, 2.0), (3.0, 1.0)]) == pytest.approx(-1.0)
    assert spearman([(1.0, 1.0), (2.0, 1.0)]) is None  # a constant side has no ranking
    assert spearman([(1.0, 2.0), (2.0, 1.0), (3.0, 3.0), (4.0, 4.0)]) == pytest.approx(0.8)
