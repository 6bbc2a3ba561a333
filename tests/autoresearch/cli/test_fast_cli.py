"""The job and compute commands start fast: none of them imports a heavy package, and the job
and compute reads an agent polls, `jobs submit` to a running daemon, `skills list --json` and
`config schema` import neither pydantic nor rich (structural, no timing: benchmarks/cli_bench.py
times them)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.autoresearch.cli.climodules import FORBIDDEN, READ_FORBIDDEN, run_cli


def test_job_and_compute_commands_import_no_heavy_package(compute_home: Path, tmp_path: Path) -> None:
    dump = tmp_path / "modules.json"

    def run(*args: str, code: int = 0, fast: bool = False) -> subprocess.CompletedProcess[str]:
        proc, heavy = run_cli(compute_home, *args, dump=dump, forbidden=READ_FORBIDDEN if fast else FORBIDDEN)
        assert proc.returncode == code, (args, proc.stdout, proc.stderr)
        assert heavy == [], f"`autoresearch {' '.join(args)}` imported {heavy}"
        return proc

    assert "jobs" in run("--help").stdout
    assert "--gpus" in run("jobs", "submit", "--help", fast=True).stdout
    assert "submit" in run("jobs", "--help", fast=True).stdout
    job_id = run("jobs", "submit", "--gpus", "1", "--", "sh", "-c", "echo hello", fast=True).stdout.strip()
    dry = run("jobs", "submit", "--dry-run", "--", "python", "train.py", fast=True)
    assert json.loads(dry.stdout)["dry_run"] is True
    run("jobs", "submit", "--priority", "hgih", "--", "true", code=2)
    run("jobs", "wait", job_id, "--timeout", "60")
    assert json.loads(run("jobs", "status", job_id, "--json", fast=True).stdout)["state"] == "succeeded"
    run("jobs", "status", "job-0000000000", "--json", code=2, fast=True)
    assert job_id in run("jobs", "status", job_id).stdout
    assert job_id in run("jobs", "list").stdout
    assert [j["id"] for j in json.loads(run("jobs", "list", "--json", fast=True).stdout)] == [job_id]
    run("jobs", "list", "--state", "succeeded", "--label", "a=b", "--limit", "3", "--json", fast=True)
    assert run("jobs", "logs", job_id, fast=True).stdout == "hello\n"
    assert json.loads(run("jobs", "logs", job_id, "--json", fast=True).stdout)["text"] == "hello\n"
    sleeper = run("jobs", "submit", "--", "sleep", "60").stdout.strip()
    run("jobs", "priority", sleeper, "high")
    run("jobs", "cancel", sleeper)
    run("jobs", "wait", sleeper, "--timeout", "60", code=1)  # cancelled: not a success
    assert json.loads(run("compute", "projects", "--json", fast=True).stdout) == []  # no project set, no job left
    run("compute", "up")  # already running: exit 0
    run("compute", "status")
    status = json.loads(run("compute", "status", "--json", fast=True).stdout)
    assert [n["name"] for n in status["nodes"]] == ["local"] and status["jobs"]
    assert [n["name"] for n in json.loads(run("compute", "nodes", "--json", fast=True).stdout)] == ["local"]
    run("compute", "nodes")
    run("compute", "cordon", "local")
    run("compute", "uncordon", "local", "--timeout", "60")
    run("skills", "list")
    assert "submit_job" in {t["name"] for t in json.loads(run("skills", "list", "--json", fast=True).stdout)}
    assert "properties" in json.loads(run("config", "schema", fast=True).stdout)
    run("compute", "down")
