"""`autoresearch compute up --backend ray --address ray://HOST:PORT`: the daemon drives the
session Ray cluster through Ray Client (the head's client server), end to end through the CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from compute import Client, ComputePaths
from compute.control import daemon_pid

_LONG_JOB = (
    'echo $$ > "$0"; trap "echo leader got TERM; wait; exit 3" TERM; '
    '(trap "echo child got TERM; exit 0" TERM; while :; do sleep 0.1; done) & echo $! >> "$0"; echo running; wait'
)
"""Writes its pid and its child's pid to $0; on SIGTERM each says so, the leader after its child ends."""


def _wait_for(predicate, what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def _gone(pid: int) -> bool:
    """No such process, or only a zombie waiting for its parent to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


@pytest.mark.ray
def test_compute_up_through_ray_client_runs_adopts_and_cancels_jobs(cli, ray_cluster, ray_client_address, tmp_path):
    def up():
        result = cli("compute", "up", "--backend", "ray", "--address", ray_client_address, "--grace", "20", "--json")
        assert result.exit_code == 0, result.output + (cli.home / "compute" / "daemon.log").read_text(errors="replace")
        return json.loads(result.stdout)

    info = up()
    assert info["backend"] == "ray" and info["config"]["ray_address"] == ray_client_address
    assert [(n["address"], len(n["gpus"])) for n in info["nodes"]] == [(ray_cluster.head_node.node_id, 2)]

    job_id = cli("jobs", "submit", "--gpus", "1", "--", "sh", "-c", "echo via ray client on GPU $CUDA_VISIBLE_DEVICES")
    job_id = job_id.stdout.strip()
    assert cli("jobs", "wait", job_id, "--timeout", "90").exit_code == 0
    with Client(cli.home, autostart=False) as client:
        assert client.get(job_id).state.value == "succeeded"
        assert client.log_path(job_id).read_text() == "via ray client on GPU 0\n"
    assert cli("jobs", "logs", job_id).stdout == "via ray client on GPU 0\n"

    pids = tmp_path / "pids"
    long_id = cli("jobs", "submit", "--", "sh", "-c", _LONG_JOB, str(pids)).stdout.strip()
    with Client(cli.home, autostart=False) as client:
        _wait_for(lambda: client.get(long_id).attempts and "running" in _read(client.log_path(long_id)),
                  f"job {long_id} to start")
        leader, child = map(int, pids.read_text().split())
        # A new daemon finds the detached agent by name through Ray Client and adopts the attempt.
        assert cli("compute", "down").exit_code == 0
        assert not _gone(leader) and not _gone(child)
        up()
        assert cli("jobs", "cancel", long_id).exit_code == 0
        assert cli("jobs", "wait", long_id, "--timeout", "90").exit_code == 1
        job = client.get(long_id)
        assert job.state.value == "cancelled" and [a.exit_code for a in job.attempts] == [3]
        log = client.log_path(long_id).read_text()
    assert "child got TERM" in log and "leader got TERM" in log  # the group got SIGTERM, not only the leader
    _wait_for(lambda: _gone(leader) and _gone(child), "the cancelled job's processes to end", timeout=30)

    assert cli("compute", "down").exit_code == 0
    assert daemon_pid(ComputePaths.of(cli.home)) is None


def test_a_client_server_that_failed_to_start_is_retried_and_a_wrong_address_is_not():
    from compute.backends.ray import _client_server_failed

    assert _client_server_failed(ConnectionError("ray client connection timeout: Starting Ray client server failed"))
    died = ("Initialization failure from server:\nTraceback (most recent call last):\n  File \".../proxier.py\", line 765,"
            " in Datapath\n    if not self.proxy_manager.start_specific_server(\n...\npsutil.ZombieProcess: PID still"
            " exists but it's a zombie (pid=24539)")  # the error a full suite run got from `compute up`
    assert _client_server_failed(ConnectionError(died))
    assert not _client_server_failed(ConnectionError("ray client connection timeout"))
    assert not _client_server_failed(RuntimeError("Version mismatch: the cluster runs Ray 2.59.0"))
