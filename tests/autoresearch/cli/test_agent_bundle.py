"""`autoresearch skills export-agent DIR`: an Agent Skills folder whose every command runs."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from autoresearch.cli import app
from autoresearch.cli.agent_bundle import FILES
from tests.autoresearch.cli.climodules import ROOT

TRAIN = """\
import argparse, time
parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--steps", type=int, default=3)
args = parser.parse_args()
for step in range(args.steps):
    print(f"step: {step} | objective: {(args.lr - 0.003) ** 2 + 1 / (step + 1)}", flush=True)
    time.sleep(0.1)
print(f"objective: {(args.lr - 0.003) ** 2}")
"""
_BLOCK = re.compile(r"```bash\n(.*?)```", re.DOTALL)
_INLINE = re.compile(r"`(autoresearch [^`]*)`")
NOT_RUN_HERE = {"autoresearch mcp"}  # serves stdio until closed: tests/skills/test_mcp.py drives it


def _campaign(folder: Path, tracking_uri: str) -> None:
    (folder / "train.py").write_text(TRAIN)
    (folder / "campaign.yaml").write_text(yaml.safe_dump({
        "name": "bundle-demo", "command": ["python", "train.py", "--lr", "{lr}"], "cwd": str(folder),
        "objective": {"metric": "objective", "mode": "min"},
        "search_space": {"lr": {"type": "float", "low": 1e-4, "high": 1e-1, "log": True}},
        "budget": {"max_trials": 2, "max_parallel": 2}, "compute": {"gpus": 0},
        "policy": {"kind": "optuna", "seed": 1}, "tracking": {"uri": tracking_uri},
    }, sort_keys=False))  # fmt: skip


@pytest.mark.timeout(1200)  # some 40 CLI calls, a campaign run, a resume and a report
def test_the_bundle_has_front_matter_and_every_command_in_it_runs(compute_home: Path, tracking, tmp_path: Path) -> None:
    bundle = tmp_path / "skill"
    result = CliRunner().invoke(app, ["skills", "export-agent", str(bundle)])
    assert result.exit_code == 0, result.output
    text = (bundle / "SKILL.md").read_text()
    front = yaml.safe_load(text.split("---\n")[1])
    assert front["name"] == "autoresearch" and len(front["description"]) <= 1024
    for relative in FILES:
        assert relative in text or relative == "SKILL.md"  # SKILL.md points at each reference file

    texts = [(bundle / relative).read_text() for relative in FILES]
    script = "\n".join(block for t in texts for block in _BLOCK.findall(t))
    commands = [line.strip() for line in script.splitlines() if "autoresearch " in line]
    for t in texts:
        prose = _BLOCK.sub("", t)
        assert not [line for line in prose.splitlines() if line.startswith("autoresearch ")]  # commands sit in blocks
        for shown in _INLINE.findall(prose):
            assert shown in NOT_RUN_HERE or any(shown in c for c in commands), f"`{shown}` is shown but never run"

    work, bin_dir = tmp_path / "work", tmp_path / "bin"
    work.mkdir()
    bin_dir.mkdir()
    _campaign(work, tracking.tracking_uri)
    (bin_dir / "python").symlink_to(sys.executable)
    shim = bin_dir / "autoresearch"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -c "from autoresearch.cli import main; main()" "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT),
           "AUTORESEARCH_HOME": str(compute_home)}
    done = subprocess.run(["bash", "-euo", "pipefail", "-x", "-c", script], cwd=work, env=env,
                          capture_output=True, text=True, timeout=1100)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-8000:]
    assert "Traceback" not in done.stdout + done.stderr
    assert done.stdout.count("exit 2") == 3  # the three bad-input examples exit 2 (the wait on a done job: 0)
    assert '"campaign": "bundle-demo"' in done.stdout and '"running": true' in done.stdout  # run --detach returned
    assert '"state": "completed"' in done.stdout  # the polled status once the detached runner was done
