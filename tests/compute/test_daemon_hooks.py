"""The daemon's health wiring, driven tick by tick in-process: the failure classifier and the
per-tick node health check (quarantine moves running work to another node)."""

from __future__ import annotations

import time

import pytest

from compute import (
    AttemptOutcome, ComputePaths, Daemon, DaemonConfig, FailureClass, HealthStatus, JobSpec, JobState, LocalBackend,
    NodeState, plan_nodes,
)
from compute.health import CommandProbe, HealthConfig, HealthMonitor
from tests.compute.helpers import TIMEOUT, gate_job


def run_until(daemon: Daemon, check, timeout: float = TIMEOUT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        daemon.tick()
        if value := check():
            return value
        time.sleep(0.02)
    raise AssertionError("timed out ticking the daemon")


@pytest.fixture
def make_daemon(tmp_path):
    made = []

    def make(**hooks) -> Daemon:
        paths = ComputePaths.of(tmp_path / "home")
        nodes = plan_nodes(virtual_nodes=2, gpus_per_node=1, detected=[])
        daemon = Daemon(paths, DaemonConfig(grace_s=1.0, min_runtime_s=0.0), LocalBackend(nodes, paths.run_dir), **hooks)
        daemon.start()
        made.append(daemon)
        return daemon

    yield make
    for daemon in made:
        if daemon.health is not None:
            daemon.health.close()
        for attempt in daemon.store.read("SELECT job_id, number FROM attempts WHERE outcome IS NULL"):
            daemon.backend.signal(f"{attempt['job_id']}.{attempt['number']}", 9)
        daemon.backend.close()
        daemon.store.close()


def test_infra_failures_from_the_classifier_move_the_job_to_another_node(make_daemon, tmp_path):
    daemon = make_daemon()
    script = 'if [ "$AR_ATTEMPT" = 1 ]; then echo "NCCL error: unhandled system error"; exit 1; fi'
    job = daemon.store.submit(JobSpec(argv=["sh", "-c", script], resources={"gpus": 1}, cwd=str(tmp_path)))
    done = run_until(daemon, lambda: (j := daemon.store.get_job(job.id)).state.final and j)
    first, second = done.attempts
    assert done.state == JobState.succeeded
    assert (first.outcome, first.failure_class) == (AttemptOutcome.infra_failed, FailureClass.infra)
    assert second.node != first.node
    assert (done.retries_used, done.infra_retries_used) == (0, 1)
    assert first.log_excerpt.startswith("[autoresearch] infra failure (rule nccl_error)")


def test_a_quarantined_node_gets_no_new_work_and_its_attempts_are_requeued(make_daemon, tmp_path):
    flag = tmp_path / "sick-node"  # the probe fails on the node named in this file
    probe = CommandProbe(["sh", "-c", f'test "$AR_NODE" != "$(cat {flag} 2>/dev/null)"'])
    config = HealthConfig(probe_interval_s=0.1, preflight_ttl_s=60, recheck_backoff_s=60)
    daemon = make_daemon(health=HealthMonitor(config, probes=[probe]))
    gate = tmp_path / "open"
    job = daemon.store.submit(gate_job(gate, resources={"gpus": 1}, cwd=str(tmp_path)))
    started = run_until(daemon, lambda: (j := daemon.store.get_job(job.id)).attempts and j)
    sick = started.attempts[0].node
    flag.write_text(sick)
    moved = run_until(daemon, lambda: len((j := daemon.store.get_job(job.id)).attempts) == 2 and j)
    assert moved.attempts[0].outcome == AttemptOutcome.infra_failed and moved.attempts[1].node != sick
    assert moved.retries_used == 0 and moved.infra_retries_used == 0
    gate.touch()
    assert run_until(daemon, lambda: daemon.store.get_job(job.id).state.final) and \
        daemon.store.get_job(job.id).state == JobState.succeeded
    node = {n.name: n for n in daemon.store.nodes()}[sick]
    assert (node.state, node.health) == (NodeState.quarantined, HealthStatus.critical)
    assert "exited 1" in node.reason
    assert "quarantined" in [e.kind for e in daemon.store.events(node=sick)]
