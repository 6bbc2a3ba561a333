"""The `compute` and `jobs` commands, through click's CliRunner and one real subprocess."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from autoresearch.cli import _register, app

_register()
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli(compute_home):
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, list(args), env={"AUTORESEARCH_HOME": str(compute_home)})

    return run


def test_submit_wait_status_logs_list(cli):
    result = cli("jobs", "submit", "--name", "hello", "--gpus", "1", "--priority", "high", "--label", "campaign=c1",
                 "--key", "c1/t1", "--", "sh", "-c", "echo one; echo two")
    assert result.exit_code == 0, result.output
    job_id = result.stdout.strip()
    assert cli("jobs", "wait", job_id, "--timeout", "60").exit_code == 0
    status = json.loads(cli("jobs", "status", job_id, "--json").stdout)
    assert (status["state"], status["priority"], status["spec"]["labels"]) == ("succeeded", 75, {"campaign": "c1"})
    attempt = status["attempts"][0]
    assert {k: attempt[k] for k in ("number", "node", "outcome", "exit_code")} == {
        "number": 1, "node": "local", "outcome": "succeeded", "exit_code": 0}
    assert len(attempt["gpus"]) == 1 and attempt["ended_at"] >= attempt["started_at"]
    assert cli("jobs", "logs", job_id).stdout == "one\ntwo\n"
    assert cli("jobs", "logs", job_id, "--tail", "1").stdout == "two\n"
    assert cli("jobs", "logs", job_id, "--follow").stdout == "one\ntwo\n"
    listed = json.loads(cli("jobs", "list", "--label", "campaign=c1", "--json").stdout)
    assert [j["id"] for j in listed] == [job_id]
    again = cli("jobs", "submit", "--key", "c1/t1", "--json", "--", "true")
    assert json.loads(again.stdout)["id"] == job_id
    assert "hello" in cli("jobs", "list").stdout


def test_wait_exit_codes_cancel_and_priority(cli):
    failing = cli("jobs", "submit", "--", "sh", "-c", "exit 4").stdout.strip()
    assert cli("jobs", "wait", failing, "--timeout", "60").exit_code == 1
    sleeper = cli("jobs", "submit", "--gpus", "1", "--", "sleep", "60").stdout.strip()
    assert cli("jobs", "wait", sleeper, "--timeout", "0.3").exit_code == 124
    assert json.loads(cli("jobs", "priority", sleeper, "urgent", "--json").stdout)["priority"] == 90
    assert cli("jobs", "cancel", sleeper, "--reason", "enough").exit_code == 0
    assert cli("jobs", "wait", sleeper, "--timeout", "60").exit_code == 1
    assert json.loads(cli("jobs", "status", sleeper, "--json").stdout)["attempts"][0]["outcome"] == "cancelled"


def test_submit_with_progress_timeout_stops_a_silent_attempt_as_hung(cli):
    script = 'echo started; if [ "$AR_ATTEMPT" = 1 ]; then sleep 60; fi'
    job_id = cli("jobs", "submit", "--progress-timeout", "1", "--grace", "0.2", "--", "sh", "-c", script).stdout.strip()
    assert cli("jobs", "wait", job_id, "--timeout", "60").exit_code == 0
    status = json.loads(cli("jobs", "status", job_id, "--json").stdout)
    assert status["spec"]["progress_timeout_s"] == 1
    hung, second = status["attempts"]
    assert (hung["outcome"], hung["failure_class"], hung["stop_reason"]) == ("infra_failed", "infra", "hang")
    assert second["outcome"] == "succeeded" and status["retries_used"] == 0


def test_compute_status_and_an_idempotent_second_up(cli, compute_home):
    report = json.loads(cli("compute", "status", "--json").stdout)
    assert report["home"] == str(compute_home) and report["daemon"]["pid"] > 0
    assert [(n["name"], n["gpus"], n["gpus_used"]) for n in report["nodes"]] == [("local", [0, 1, 2, 3], 0)]
    second = cli("compute", "up")  # exit 0: the daemon the caller asked for is up
    assert second.exit_code == 0 and "already running" in second.stdout
    again = json.loads(cli("compute", "up", "--json").stdout)
    assert again["already_running"] is True and again["pid"] == report["daemon"]["pid"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["jobs", "submit", "--priority", "hgih", "--", "true"], "unknown priority 'hgih'"),
        (["jobs", "submit", "--gpus", "64", "--", "true"], "largest node"),
        (["jobs", "submit", "--max-retries", "-1", "--", "true"], "max_retries"),
        (["jobs", "submit", "--nodes", "2", "--", "true"], "resources.nodes=2 needs resources.gpus >= 1"),
        (["jobs", "submit", "--nodes", "99", "--gpus", "1", "--", "true"], "node(s) with that many slots"),
        (["jobs", "submit", "--launcher", "mpirun", "--", "true"], "launcher must be 'none' or 'torchrun'"),
        (["jobs", "submit", "--label", "novalue", "--", "true"], "is not key=value"),
        (["jobs", "submit", "--progress-timeout", "0", "--", "true"],
         "progress_timeout_s must be a positive number of seconds"),
        (["jobs", "submit", "--progress-timeout", "-30", "--", "true"], "leave it unset for no hang detection"),
        (["jobs", "submit", "--progress-timeout", "soon", "--", "true"], "--progress-timeout"),
        (["jobs", "status", "job-0000000000"], "no job 'job-0000000000'"),
        (["jobs", "logs", "job-0000000000"], "no job"),
        (["jobs", "cancel", "job-0000000000"], "no job"),
        (["jobs", "list", "--state", "done"], "not a job state"),
        (["compute", "up", "--grace", "-1"], "--grace"),
    ],
)
def test_bad_input_exits_2_with_one_paragraph(cli, args, message):
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output


def test_bad_input_in_a_real_process_has_no_traceback(compute_home):
    proc = subprocess.run(
        [sys.executable, "-c", "from autoresearch.cli import main; main()", "jobs", "submit", "--time-limit", "-5",
         "--", "true"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={**os.environ, "AUTORESEARCH_HOME": str(compute_home)},
    )
    assert proc.returncode == 2
    assert "time_limit_s" in proc.stderr and "Traceback" not in proc.stderr and proc.stdout == ""


def test_compute_up_says_within_seconds_that_its_daemon_is_not_answering_yet(tmp_path: Path) -> None:
    """A daemon still connecting to a Ray cluster that does not answer (as one without the token): `compute up`
    says so on stderr after a few seconds, naming what the daemon waits on and its log, while the daemon
    still has its time (120 s for Ray), instead of saying nothing until then."""
    home = tmp_path / "home"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from autoresearch.cli import main; main()", "compute", "up", "--backend", "ray",
         "--address", "127.0.0.1:1"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "AUTORESEARCH_HOME": str(home)},
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # the notice is its first line: nothing else comes before the 120 s
        assert proc.poll() is None, "compute up ended instead of waiting for its daemon"
    finally:
        pid = next((int(w) for w in line.replace(")", " ").split() if w.isdigit()), None) if line else None
        proc.kill()
        proc.wait(timeout=30)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # never leave a daemon stuck connecting behind
    assert line.startswith("warning: the compute daemon (pid ")
    assert "not answering yet" in line and "connecting to the Ray cluster at 127.0.0.1:1" in line
    assert str(home / "compute" / "daemon.log") in line
