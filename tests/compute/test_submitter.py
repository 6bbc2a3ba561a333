"""A job runs with the submitter's environment, as with sbatch: PATH, VIRTUAL_ENV, and a bare
`python` resolved to the submitter's interpreter (a real daemon started from another env)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from autoresearch.cli import app
from compute import Client, JobSpec
from compute.submitter import Submitter, as_submitted

PROBE = "import os, sys; print(sys.executable); print(os.environ.get('VIRTUAL_ENV', '-'))"


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A folder that looks like an activated virtualenv: bin/python is this interpreter."""
    root = tmp_path / "myenv"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").symlink_to(sys.executable)
    return root


def submitter(environ: dict[str, str], executable: str, cwd: str = "/") -> Submitter:
    return Submitter(environ, cwd, executable, os.getuid(), os.getgid())


def test_a_bare_python_is_the_submitters_and_the_env_is_recorded(venv: Path) -> None:
    environ = {"PATH": f"{venv / 'bin'}:/usr/bin", "VIRTUAL_ENV": str(venv)}
    spec = as_submitted(JobSpec(argv=["python", "train.py"]), submitter(environ, "/fallback/python"))
    assert spec.argv == [str(venv / "bin" / "python"), "train.py"]
    assert spec.env == environ
    # what the spec sets itself wins; a path in argv[0] is never touched
    own = as_submitted(JobSpec(argv=["/opt/py/bin/python3"], env={"PATH": "/opt/py/bin"}), submitter(environ, "/x"))
    assert own.argv == ["/opt/py/bin/python3"] and own.env["PATH"] == "/opt/py/bin"
    # nothing named python on the submitter's PATH: the submitting interpreter
    fallback = submitter({"PATH": "/nowhere"}, "/fallback/python")
    assert as_submitted(JobSpec(argv=["python3"]), fallback).argv == ["/fallback/python"]
    # a relative PATH entry means what it means in the submitter's cwd (not the daemon's)
    relative = submitter({"PATH": "myenv/bin"}, "/fallback/python", cwd=str(venv.parent))
    assert as_submitted(JobSpec(argv=["python"]), relative).argv == [str(venv / "bin" / "python")]


def test_the_job_sees_the_submitters_interpreter_and_virtualenv(compute_client: Client, venv: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", f"{venv / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setenv("VIRTUAL_ENV", str(venv))
    job = compute_client.submit(JobSpec(argv=["python", "-c", PROBE]))
    compute_client.wait(job.id, timeout=60)
    printed = compute_client.log_path(job.id).read_text().split()
    assert printed == [str(venv / "bin" / "python"), str(venv)]


def test_dry_run_prints_the_resolved_spec_and_submits_nothing(compute_client: Client, venv: Path) -> None:
    env = {"AUTORESEARCH_HOME": str(compute_client.home), "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
           "VIRTUAL_ENV": str(venv), "SECRET_TOKEN": "x"}
    result = CliRunner().invoke(app, ["jobs", "submit", "--dry-run", "--key", "exp/1", "--gpus", "1",
                                      "--priority", "high", "--", "python", "train.py"], env=env)
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    spec = shown["spec"]
    assert shown["dry_run"] is True and spec["argv"] == [str(venv / "bin" / "python"), "train.py"]
    assert spec["env"] == ["PATH", "VIRTUAL_ENV"]  # names only, and only what the job gets
    assert (spec["resources"]["gpus"], spec["priority"], spec["idempotency_key"]) == (1, 75, "exp/1")
    assert compute_client.list() == []
    bad = CliRunner().invoke(app, ["jobs", "submit", "--dry-run", "--gpus", "9", "--", "true"], env=env)
    assert bad.exit_code == 2 and "largest node" in bad.stderr
