"""Waiting clients and a daemon that dies (issue 20 item 7): a waiting client restarts it (with
the dead daemon's config; the new one adopts the running attempts) or, without autostart, says
so (the campaign-level drill is in tests/autoresearch/runner/test_dead_daemon.py)."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from compute import Client, DaemonNotRunning, JobState
from compute.control import daemon_info, daemon_pid
from tests.compute.helpers import gate_job, wait_started, wait_until


def _kill_daemon(client: Client) -> int:
    pid = daemon_pid(client.paths)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: daemon_pid(client.paths) is None, what="the daemon's death")
    return pid


def test_a_waiting_client_without_autostart_reports_the_dead_daemon(compute_client: Client, tmp_path: Path) -> None:
    job = compute_client.submit(gate_job(tmp_path / "gate"))
    wait_started(compute_client, job.id)
    _kill_daemon(compute_client)
    with pytest.raises(DaemonNotRunning) as info:
        compute_client.wait_for_change([job.id], timeout=30)
    assert "stopped while jobs were waiting on it" in str(info.value) and "autoresearch compute up" in str(info.value)
    with pytest.raises(DaemonNotRunning, match="autoresearch compute up"):
        compute_client.wait(job.id, timeout=30)


def test_a_waiting_client_restarts_the_dead_daemon_with_its_config(compute_client: Client, tmp_path: Path) -> None:
    job = compute_client.submit(gate_job(tmp_path / "gate"))
    wait_started(compute_client, job.id)
    old = _kill_daemon(compute_client)
    waiter = Client(compute_client.home)  # autostart, like the campaign runner's
    threading.Timer(0.5, lambda: (tmp_path / "gate").touch()).start()
    try:
        [done] = waiter.wait(job.id, timeout=60)
    finally:
        waiter.close()
    assert done.state is JobState.succeeded and len(done.attempts) == 1  # adopted, not restarted
    info = daemon_info(compute_client.paths)
    assert info is not None and info["pid"] != old and info["config"]["tick_s"] == 0.2  # the killed one's config



def test_a_stopped_daemon_is_reported_as_not_responding(compute_client: Client) -> None:
    """SIGSTOP: the daemon still holds its lock, so it looked "running" with its jobs "pending
    (submitted)" and no hint; its last tick tells. SIGCONT: it responds again and runs the job."""
    from click.testing import CliRunner

    from autoresearch.cli import _register, app
    from compute import JobSpec

    _register()
    pid = daemon_pid(compute_client.paths)
    assert pid is not None and daemon_info(compute_client.paths)["responding"]
    os.kill(pid, signal.SIGSTOP)
    try:
        job = compute_client.submit(JobSpec(argv=["true"]))
        wait_until(lambda: not daemon_info(compute_client.paths)["responding"], what="the stopped daemon to go stale")
        home = {"AUTORESEARCH_HOME": str(compute_client.paths.home)}
        for args in (["compute", "status"], ["jobs", "status", job.id]):
            out = CliRunner().invoke(app, args, env=home).output
            assert "daemon not responding since " in out and f": check pid {pid}" in out, out
    finally:
        os.kill(pid, signal.SIGCONT)
    assert compute_client.wait(job.id, timeout=60)[0].state == JobState.succeeded
    assert daemon_info(compute_client.paths)["responding"]
