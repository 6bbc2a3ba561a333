"""A daemon restarted by a client runs with the cluster variables the dead daemon ran with
(`compute.control.CLUSTER_ENV`: RAY_AUTH_MODE and the token), not the client's shell's, or the
client refuses to guess and says why. (The Ray restart against a real cluster is in
tests/compute/backends/test_ray_daemon_env.py.)"""

from __future__ import annotations

import json
import os
import signal
import stat

import pytest

from compute import Client, ComputeError, JobSpec, JobState
from compute.control import daemon_pid
from tests.compute.helpers import log_text, wait_until


def _kill_daemon(client: Client) -> None:
    pid = daemon_pid(client.paths)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: daemon_pid(client.paths) is None, what="the daemon's death")


def test_a_restarted_daemon_keeps_the_cluster_env_it_ran_with(start_compute, monkeypatch) -> None:
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.delenv("RAY_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("RAY_AUTH_TOKEN_PATH", raising=False)
    client = start_compute()
    recorded = client.paths.daemon_env
    assert json.loads(recorded.read_text()) == {"RAY_AUTH_MODE": "disabled"}
    assert stat.S_IMODE(recorded.stat().st_mode) == 0o600
    _kill_daemon(client)
    monkeypatch.setenv("RAY_AUTH_MODE", "token")  # the shell of the runner that restarts it differs
    with Client(client.home) as restarting:
        job = restarting.submit(JobSpec(argv=["sh", "-c", 'echo "mode=$RAY_AUTH_MODE"']))
        [done] = restarting.wait(job.id, timeout=60)
        assert done.state is JobState.succeeded
        assert "mode=disabled" in log_text(restarting, job.id)  # jobs see the daemon's own (jobenv allowlist)


def test_a_restart_that_cannot_read_the_recorded_env_refuses_with_the_reason(start_compute) -> None:
    client = start_compute()
    _kill_daemon(client)
    client.paths.daemon_env.write_text("{not json")
    with Client(client.home) as restarting, pytest.raises(ComputeError) as info:
        restarting.submit(JobSpec(argv=["true"]))
    assert "cannot be restarted as it ran" in str(info.value) and "autoresearch compute up" in str(info.value)
    assert daemon_pid(client.paths) is None


def test_a_clean_stop_leaves_no_recorded_env(start_compute) -> None:
    from compute import stop_daemon

    client = start_compute()
    assert client.paths.daemon_env.exists()
    stop_daemon(client.home)
    assert not client.paths.daemon_env.exists()


def test_a_daemon_that_cannot_start_says_why_and_holds_no_lock(tmp_path) -> None:
    """Stuck before serving (a Ray cluster it cannot reach): stopped, so that no client takes it for a
    running daemon and waits on it with no word; the error carries its log's last lines."""
    from compute import ComputePaths, DaemonConfig, start_daemon

    paths = ComputePaths.of(tmp_path / "home")
    try:
        with pytest.raises(ComputeError) as info:
            start_daemon(paths.home, DaemonConfig(backend="ray", ray_address="127.0.0.1:1"), wait_s=8)
        assert "did not become ready within 8s and was stopped" in str(info.value) or "exited" in str(info.value)
        assert daemon_pid(paths) is None
    finally:
        if (pid := daemon_pid(paths)) is not None:
            os.kill(pid, signal.SIGKILL)
