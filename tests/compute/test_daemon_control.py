"""One daemon per home, autostart, `down` with and without --stop-jobs, attempt environment."""

from __future__ import annotations

import pytest

from compute import (
    AttemptOutcome, Client, ComputeError, DaemonAlreadyRunning, DaemonConfig, DaemonNotRunning, JobSpec, JobState,
    LaunchRequest, LocalBackend, plan_nodes, start_daemon, stop_daemon,
)
from compute.control import daemon_info, daemon_pid
from tests.conftest import FAST_DAEMON
from tests.compute.helpers import env_job, gate_job, log_text, wait_state, wait_until


def test_a_second_daemon_refuses_to_start(compute_client):
    with pytest.raises(DaemonAlreadyRunning, match="already serves .* compute down"):
        start_daemon(compute_client.home, DaemonConfig())
    info = daemon_info(compute_client.paths)
    assert info["pid"] == daemon_pid(compute_client.paths) and info["nodes"][0]["gpus"] == [0, 1, 2, 3]


def test_the_first_client_that_needs_the_daemon_starts_it(tmp_path):
    home = tmp_path / "fresh"
    with Client(home) as client:
        assert daemon_pid(client.paths) is None
        job = client.submit(JobSpec(argv=["true"]))
        try:
            assert client.wait(job.id, timeout=60)[0].state == JobState.succeeded
            assert daemon_pid(client.paths) is not None
        finally:
            stop_daemon(home, stop_jobs=True)


def test_down_keeps_attempts_running_and_the_next_daemon_adopts_them(start_compute, tmp_path):
    client = start_compute()
    gate = tmp_path / "open"
    job = client.submit(gate_job(gate, resources={"gpus": 1}))
    wait_state(client, job.id, JobState.running)
    stop_daemon(client.home)
    assert client.get(job.id).state == JobState.running
    start_daemon(client.home, DaemonConfig(**FAST_DAEMON))
    gate.touch()
    done = client.wait(job.id, timeout=60)[0]
    assert done.state == JobState.succeeded and len(done.attempts) == 1


def test_down_with_stop_jobs_requeues_running_work(start_compute, tmp_path):
    client = start_compute()
    job = client.submit(gate_job(tmp_path / "never", resources={"gpus": 1}))
    wait_state(client, job.id, JobState.running)
    stop_daemon(client.home, stop_jobs=True)
    requeued = client.get(job.id)
    assert requeued.state == JobState.pending
    assert requeued.attempts[0].outcome == AttemptOutcome.preempted and requeued.retries_used == 0
    with pytest.raises(DaemonNotRunning, match="compute up"):
        client.wait(job.id, timeout=5)  # autostart is off: it would wait forever


def test_wait_for_change_can_ignore_a_start_and_return_at_the_end(compute_client, tmp_path):
    gate = tmp_path / "open"
    job = compute_client.submit(gate_job(gate, resources={"gpus": 1}))
    wait_state(compute_client, job.id, JobState.running)
    since = {job.id: JobState.pending.value}  # what a waiter saw when it submitted the job
    assert compute_client.wait_for_change([job.id], since, timeout=0.5, ignore_starts=True) == []
    assert compute_client.wait_for_change([job.id], since, timeout=0.5)[0].state is JobState.running
    gate.touch()
    ended = compute_client.wait_for_change([job.id], since, timeout=60, ignore_starts=True)
    assert ended and ended[0].state is JobState.succeeded


def test_attempts_get_their_gpus_ids_checkpoint_dir_and_env(compute_client):
    job = compute_client.submit(env_job(resources={"gpus": 2}, env={"EXTRA": "yes", "AR_JOB_ID": "spoofed"}))
    done = compute_client.wait(job.id, timeout=60)[0]
    lines = dict(line.split("=", 1) for line in log_text(compute_client, job.id).splitlines())
    assert lines == {
        "CUDA_VISIBLE_DEVICES": ",".join(map(str, done.attempts[0].gpus)), "AR_JOB_ID": job.id, "AR_ATTEMPT": "1",
        "AR_CHECKPOINT_DIR": done.checkpoint_dir, "EXTRA": "yes",
    }


def test_wait_for_change_and_log_path(compute_client, tmp_path):
    gate = tmp_path / "open"
    job = compute_client.submit(gate_job(gate, resources={"gpus": 1}))
    changed = compute_client.wait_for_change([job.id], since={job.id: "pending"}, timeout=60)
    assert changed and changed[0].state != JobState.pending
    assert compute_client.wait_for_change([job.id], timeout=0.2) == []
    assert compute_client.log_path(job.id).name == "attempt-1.log"
    with pytest.raises(ComputeError, match="there is no attempt 5"):
        compute_client.log_path(job.id, attempt=5)
    gate.touch()
    assert compute_client.wait(job.id, timeout=60)[0].state == JobState.succeeded


def test_a_missing_cwd_is_refused_at_submit(compute_client, tmp_path):
    with pytest.raises(ComputeError, match="is not a directory"):
        compute_client.submit(JobSpec(argv=["true"], cwd=str(tmp_path / "gone")))


def test_an_attempt_whose_handle_was_never_recorded_is_adopted_from_its_pid_file(tmp_path):
    """The daemon commits `running` before the spawn and the pid just after: a daemon killed in
    between leaves no handle in the store. The next one finds the live process by its pid file."""

    nodes = plan_nodes(virtual_nodes=1, gpus_per_node=1, detected=[])
    gate = tmp_path / "open"
    request = LaunchRequest(key="job-0000000001.1", argv=["sh", "-c", f"while [ ! -e {gate} ]; do sleep 0.02; done; exit 7"],
                            env={}, cwd=str(tmp_path), node=nodes[0].name, gpus=(0,), log_path=tmp_path / "a.log")  # fmt: skip
    first = LocalBackend(nodes, tmp_path / "run")
    first.launch(request)  # ... and the daemon dies before record_handle
    pid_file = tmp_path / "run" / f"{request.key}.pid"
    wait_until(pid_file.exists, what="the attempt's pid file")

    second = LocalBackend(nodes, tmp_path / "run")
    assert second.adopt(request.key, None) is None  # alive: adopted, not lost
    gate.touch()
    ended = wait_until(lambda: second.poll(request.key), what="the adopted attempt's exit")
    assert ended.exit_code == 7


def test_an_idle_daemon_truncates_the_stores_write_ahead_log(compute_client):
    """A burst of jobs grows the WAL; SQLite never shrinks it while the daemon's connection is
    open, so the daemon truncates it once idle."""
    from compute import JobSpec, Store

    jobs = [compute_client.submit(JobSpec(argv=["true"])) for _ in range(20)]
    compute_client.wait([j.id for j in jobs], timeout=120)
    store = Store(compute_client.paths)
    try:
        assert store.wal_bytes() > 0, "the burst wrote to the write-ahead log"
        wait_until(lambda: store.wal_bytes() == 0, what="the idle daemon to truncate the WAL")
        assert store.read("SELECT COUNT(*) AS n FROM jobs WHERE state='succeeded'")[0]["n"] == 20
    finally:
        store.close()
