"""Staging on the Ray backend (compute/daemon_staging.py): the next job for a slot waits on the slot's
node agent and starts there the moment the attempt holding the slot exits, with no scheduling pass
in between; it is recorded with the node's start time, and taken back untouched (no attempt spent)
when a higher-priority job arrives, when it is cancelled, or when its node stops taking work."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compute import AttemptOutcome, Client, ComputePaths, DaemonConfig, JobSpec, JobState, start_daemon
from compute.control import daemon_pid
from compute.waiting import WaitKind
from tests.conftest import FAST_DAEMON
from tests.compute.helpers import gate_job, quick_job, wait_started, wait_state, wait_until

pytestmark = pytest.mark.ray
ONE, TWO = {"gpus": 1}, {"gpus": 2}


@pytest.fixture
def client(ray_cluster: Any, start_compute: Callable[..., Client]) -> Client:
    """A daemon on the session cluster's head (2 logical GPUs)."""
    return start_compute(backend="ray", ray_address=ray_cluster.address, gpus=None)


def staged_behind(client: Client, job_id: str) -> str:
    """Wait until the job is staged; the key of the attempt it waits behind."""
    job = wait_until(lambda: (j := client.get(job_id)).waiting_kind is WaitKind.staged and j,
                     what=f"{job_id} staged")
    return str(job.waiting_reason).rsplit("attempt ", 1)[1].split()[0]


def test_a_staged_job_starts_on_the_freed_slot_while_the_daemon_is_stopped(client, tmp_path):
    gates = {}
    for i in range(2):  # both slots taken
        holder = client.submit(gate_job(tmp_path / f"gate{i}", resources=ONE))
        wait_started(client, holder.id)
        gates[f"{holder.id}.1"] = tmp_path / f"gate{i}"
    began = tmp_path / "began"
    nxt = client.submit(JobSpec(argv=["sh", "-c", f'date +%s.%N > "{began}"'], resources=ONE))
    before = staged_behind(client, nxt.id)
    pid = daemon_pid(ComputePaths.of(client.home))
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # no tick, no scheduling pass, no launch call from here on
    try:
        gates[before].touch()
        ran_at = float(wait_until(lambda: began.exists() and began.read_text().strip(), what="the staged job ran"))
    finally:
        os.kill(pid, signal.SIGCONT)
    job = wait_state(client, nxt.id, JobState.succeeded)
    [attempt] = job.attempts
    holder = client.get(before.split(".")[0])
    assert attempt.node == holder.attempts[0].node and attempt.gpus == holder.attempts[0].gpus
    assert attempt.started_at <= ran_at  # the node's start time, not when the daemon woke up again
    assert attempt.started_at <= holder.attempts[0].ended_at  # recorded before the holder's end record
    for gate in gates.values():
        gate.touch()


def test_a_higher_priority_submit_takes_the_slot_of_a_staged_job(client, tmp_path):
    gate = tmp_path / "gate"
    holder = client.submit(gate_job(gate, resources=TWO, preemptible=False))
    wait_started(client, holder.id)
    low = client.submit(quick_job(priority="low", resources=ONE))
    assert staged_behind(client, low.id) == f"{holder.id}.1"
    high = client.submit(quick_job(priority="high", resources=ONE))
    assert staged_behind(client, high.id) == f"{holder.id}.1"
    recalled = client.get(low.id)
    assert recalled.state is JobState.pending and recalled.waiting_kind is not WaitKind.staged
    assert recalled.attempts == []  # taken back untouched: no attempt recorded, none spent
    gate.touch()
    done = {j.id: j for j in client.wait([low.id, high.id, holder.id], timeout=60)}
    assert all(j.state is JobState.succeeded and len(j.attempts) == 1 for j in done.values())
    assert done[high.id].attempts[0].started_at <= done[low.id].attempts[0].started_at
    assert [e.kind for e in client.events(job_id=low.id) if e.kind in ("started", "requeued")] == ["started"]


def test_a_cancelled_staged_job_never_runs(client, tmp_path):
    gate, ran = tmp_path / "gate", tmp_path / "ran"
    holder = client.submit(gate_job(gate, resources=TWO))
    wait_started(client, holder.id)
    doomed = client.submit(JobSpec(argv=["touch", str(ran)], resources=ONE))
    staged_behind(client, doomed.id)
    client.cancel(doomed.id)
    after = client.submit(quick_job(resources=ONE))  # staged in its place once it is taken back
    assert staged_behind(client, after.id) == f"{holder.id}.1"
    gate.touch()
    assert wait_state(client, after.id, JobState.succeeded).attempts[0].node == client.get(holder.id).attempts[0].node
    cancelled = client.get(doomed.id)
    assert cancelled.state is JobState.cancelled and cancelled.attempts == [] and not ran.exists()



def test_a_staged_job_its_node_starts_after_it_was_cancelled_is_stopped_and_recorded(client, tmp_path):
    """The job is cancelled while the daemon cannot take it back (stopped), and its node starts it when
    the slot frees: the daemon stops it at once and records that attempt (cancelled, killed, with the
    node's start time), so the job's record shows that it ran; before, it was killed with no record."""
    gate, began = tmp_path / "gate", tmp_path / "began"
    holder = client.submit(gate_job(gate, resources=TWO))
    wait_started(client, holder.id)
    doomed = client.submit(JobSpec(argv=["sh", "-c", f'date +%s.%N > "{began}"; exec sleep 61.25'], resources=ONE))
    staged_behind(client, doomed.id)
    pid = daemon_pid(ComputePaths.of(client.home))
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # no pass takes it back from here on
    try:
        client.cancel(doomed.id, "not needed")  # pending: cancelled in the store at once
        gate.touch()
        ran_at = float(wait_until(lambda: began.exists() and began.read_text().strip(), what="the staged job ran"))
    finally:
        os.kill(pid, signal.SIGCONT)
    job = wait_until(lambda: (j := client.get(doomed.id)).attempts and j, what="the attempt recorded")
    [attempt] = job.attempts
    assert job.state is JobState.cancelled
    assert attempt.outcome is AttemptOutcome.cancelled and attempt.stop_reason == "cancel"
    assert attempt.started_at <= ran_at <= attempt.ended_at  # type: ignore[operator]
    assert attempt.node == client.get(holder.id).attempts[0].node
    assert "started on" in next(e.reason for e in client.events(job_id=doomed.id) if e.kind == "killed")
    wait_until(lambda: subprocess.run(["pgrep", "-f", "sleep 61.25"], capture_output=True).returncode == 1,
               what="the staged job's process gone")


def test_a_staged_job_is_taken_back_from_a_cordoned_node(client, tmp_path):
    gate = tmp_path / "gate"
    holder = client.submit(gate_job(gate, resources=TWO))
    wait_started(client, holder.id)
    nxt = client.submit(quick_job(resources=ONE))
    staged_behind(client, nxt.id)
    node = client.get(holder.id).attempts[0].node
    client.cordon(node, "maintenance")
    wait_until(lambda: client.get(nxt.id).waiting_kind is WaitKind.node_unavailable, what="taken back")
    gate.touch()
    wait_state(client, holder.id, JobState.succeeded)
    assert client.get(nxt.id).state is JobState.pending and client.get(nxt.id).attempts == []
    client.uncordon(node)
    assert len(wait_state(client, nxt.id, JobState.succeeded).attempts) == 1


def test_a_staged_job_whose_node_is_lost_stays_pending_untouched(ray_cluster, client, tmp_path):
    head_gate, gate = tmp_path / "head", tmp_path / "gate"
    head_job = client.submit(gate_job(head_gate, resources=TWO))  # the head is the only node yet
    wait_started(client, head_job.id)
    head = client.get(head_job.id).attempts[0].node
    client.cordon(head, "nothing staged here")
    worker = ray_cluster.add_node(num_cpus=1, num_gpus=2)
    try:
        wait_until(lambda: len(client.nodes()) == 2, what="the worker node in the node table")
        holder = client.submit(gate_job(gate, resources=TWO))
        wait_started(client, holder.id)
        nxt = client.submit(quick_job(resources=ONE))
        assert staged_behind(client, nxt.id) == f"{holder.id}.1"
        ray_cluster.remove_node(worker, allow_graceful=False)  # SIGKILL: raylet, workers, our agent
        wait_until(lambda: client.get(holder.id).attempts[0].outcome is not None, what="the holder's loss settled")
    finally:
        if worker in ray_cluster.worker_nodes:
            ray_cluster.remove_node(worker)
    assert client.get(holder.id).attempts[0].outcome is AttemptOutcome.lost
    left = client.get(nxt.id)
    assert left.state is JobState.pending and left.attempts == []  # back in the queue, no attempt spent
    client.uncordon(head)
    head_gate.touch()
    gate.touch()
    done = client.wait([nxt.id, holder.id], timeout=90)
    assert all(j.state is JobState.succeeded for j in done) and len(done[0].attempts) == 1


def _loops(marker: str) -> int:
    """How many processes run a command line containing `marker`."""
    count = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            count += marker in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            pass
    return count


def test_a_staged_job_a_dead_daemon_left_is_stopped_by_the_next_one(ray_cluster, client, tmp_path):
    gate, done, runs = tmp_path / "gate", tmp_path / "done", tmp_path / "runs"
    holder = client.submit(gate_job(gate, resources=TWO))
    wait_started(client, holder.id)
    script = f'echo "$AR_ATTEMPT" >> "{runs}"; while [ ! -e "{done}" ]; do sleep 0.05; done'
    nxt = client.submit(JobSpec(argv=["sh", "-c", script], resources=ONE))
    staged_behind(client, nxt.id)
    pid = daemon_pid(ComputePaths.of(client.home))
    assert pid is not None
    os.kill(pid, signal.SIGKILL)  # dies with a job staged on the agent
    gate.touch()
    wait_until(lambda: runs.exists() and runs.read_text(), what="the staged job started, unrecorded")
    start_daemon(client.home, DaemonConfig(**{**FAST_DAEMON, "backend": "ray", "ray_address": ray_cluster.address,
                                              "gpus": None}))
    wait_until(lambda: runs.read_text().count("\n") == 2, what="the job started again by the new daemon")
    wait_until(lambda: _loops(str(done)) == 1, what="the unrecorded run stopped: one run of the job left")
    done.touch()
    job = wait_state(client, nxt.id, JobState.succeeded)
    assert len(job.attempts) == 1
