"""Node health through the real daemon: real probes (a command probe per virtual node), real
attempts, fault drills written by the client, quarantine, hysteresis, cordon and uncordon."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from compute import AttemptOutcome, Client, FailureClass, JobSpec, JobState, NodeState, UncordonFailed
from compute.health import FaultRefused, HealthConfig
from tests.compute.helpers import gate_job, real_gpu_host, wait_started, wait_until

FAST = dict(preflight_ttl_s=600, recheck_backoff_s=60, recheck_backoff_max_s=60)


def flag_probe(flag: Path) -> list[str]:
    """A command probe that fails on the node named in the file `flag` (passes on the others)."""
    return ["sh", "-c", f'test "$AR_NODE" != "$(cat {flag} 2>/dev/null)"']


def node(client: Client, name: str):
    return next(n for n in client.nodes() if n.name == name)


def all_probed(client: Client) -> bool:
    return all(n.last_probe_at is not None for n in client.nodes())


def kinds(client: Client, name: str) -> list[str]:
    return [e.kind for e in client.events(node=name)]


def test_a_node_whose_probe_turns_critical_is_quarantined_and_the_next_100_jobs_avoid_it(start_compute, tmp_path):
    flag = tmp_path / "sick"
    health = HealthConfig(command=flag_probe(flag), probe_interval_s=0.3, **FAST)
    client = start_compute(gpus=None, virtual_nodes=3, gpus_per_node=1, health=health)
    wait_until(lambda: all_probed(client), what="preflight probes")
    flag.write_text("local-1")
    bad = wait_until(lambda: (n := node(client, "local-1")).state is NodeState.quarantined and n,
                     what="local-1 quarantined")
    assert bad.health.value == "critical" and "exited 1" in bad.reason
    quarantine = next(e for e in client.events(node="local-1") if e.kind == "quarantined")
    assert quarantine.data == {"state": "quarantined", "health": "critical", "was": "active"}

    jobs = [client.submit(JobSpec(argv=["true"], resources={"gpus": 1})).id for _ in range(100)]
    done = client.wait(jobs, timeout=300)
    assert [j.state for j in done] == [JobState.succeeded] * 100
    placed = {a.node for j in done for a in j.attempts}
    assert placed == {"local-0", "local-2"}
    assert node(client, "local-1").state is NodeState.quarantined


def test_a_job_killed_by_an_injected_nccl_fault_reruns_elsewhere_without_spending_user_retries(
        start_compute, tmp_path):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1, health=HealthConfig(**FAST))
    gate = tmp_path / "open"
    job = client.submit(gate_job(gate, resources={"gpus": 1}, max_retries=0))
    first = wait_started(client, job.id).attempts[0]
    fault = client.inject_fault(first.node, "nccl")
    assert fault.node == first.node
    moved = wait_until(lambda: len((j := client.get(job.id)).attempts) == 2 and j, what="second attempt")
    gate.touch()
    done = client.wait(job.id, timeout=60)[0]
    killed, second = done.attempts
    assert done.state is JobState.succeeded and second.node != first.node and moved.attempts[1].node == second.node
    assert (killed.outcome, killed.failure_class) == (AttemptOutcome.infra_failed, FailureClass.infra)
    # Either the job's own NCCL error ended it and was classified, or (a slow machine: CI saw it) the
    # node's next probe found the fault first and quarantine stopped the attempt: infra either way.
    assert killed.log_excerpt.startswith("[autoresearch] infra failure (rule nccl_error)") or (
        killed.stop_reason == "quarantine" and "fault.nccl.all_reduce" in killed.log_excerpt), killed
    assert "NCCL error" in killed.log_excerpt
    quarantined = killed.stop_reason == "quarantine"  # a quarantine's stop never spends a retry (compute/endings.py)
    assert (done.retries_used, done.infra_retries_used) == (0, 0 if quarantined else 1), killed
    bad = wait_until(lambda: (n := node(client, first.node)).state is NodeState.quarantined and n,
                     what="the faulty node quarantined by its next probe")
    assert "nccl.all_reduce" in bad.reason
    assert kinds(client, first.node).count("fault_injected") == 1


def test_a_flapping_node_stays_quarantined_through_the_hysteresis(start_compute, tmp_path):
    count, stable = tmp_path / "probes", tmp_path / "stable"
    # local-1 alternates pass, fail, pass, fail ... until `stable` exists; local-0 always passes.
    script = (f'[ "$AR_NODE" = local-1 ] || exit 0; [ -e {stable} ] && exit 0; '
              f'n=$(cat {count} 2>/dev/null || echo 0); echo $((n + 1)) > {count}; [ $((n % 2)) -eq 0 ]')
    health = HealthConfig(command=["sh", "-c", script], probe_interval_s=0.1, release_after_passes=3,
                          release_pass_spacing_s=0.1, recheck_backoff_s=0.1, recheck_backoff_max_s=0.2)
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1, health=health)
    wait_until(lambda: node(client, "local-1").state is NodeState.quarantined, what="first failing probe")
    seen = set()
    deadline = time.monotonic() + 120
    while int(count.read_text() or 0) < 12:  # at least 5 passing probes while it flaps
        seen.add(node(client, "local-1").state)
        assert time.monotonic() < deadline, f"only {count.read_text()} probes in 120 s"
        time.sleep(0.02)  # a busy loop here starves the daemon it watches
    assert seen == {NodeState.quarantined}
    assert "node_returned" not in kinds(client, "local-1")
    stable.touch()
    back = wait_until(lambda: (n := node(client, "local-1")).state is NodeState.active and n, what="release")
    assert back.reason.startswith("passed 3 probes in a row")
    assert kinds(client, "local-1").count("node_returned") == 1


def test_uncordon_returns_a_node_only_after_it_passed_a_probe(start_compute, tmp_path):
    flag = tmp_path / "sick"
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1, health=HealthConfig(command=flag_probe(flag), **FAST))
    wait_until(lambda: all_probed(client), what="preflight probes")
    assert client.cordon("local-0", "fan swap").state is NodeState.cordoned
    job = client.submit(JobSpec(argv=["true"], resources={"gpus": 1}))
    assert {a.node for a in client.wait(job.id, timeout=60)[0].attempts} == {"local-1"}

    back = client.uncordon("local-0", timeout=60)
    assert (back.state, back.reason) == (NodeState.active, "uncordoned and passed a probe")
    events = [e for e in client.events(node="local-0") if e.kind in ("uncordon_requested", "probe", "node_returned")]
    after = events[[e.kind for e in events].index("uncordon_requested"):]
    assert [e.kind for e in after] == ["uncordon_requested", "probe", "node_returned"]
    assert after[1].data["status"] == "ok"

    client.cordon("local-1")
    flag.write_text("local-1")
    with pytest.raises(UncordonFailed, match="failed its probe after uncordon"):
        client.uncordon("local-1", timeout=60)
    assert node(client, "local-1").state is NodeState.quarantined


def test_cordon_lets_running_work_finish(start_compute, tmp_path):
    client = start_compute(gpus=None, virtual_nodes=1, gpus_per_node=1, health=HealthConfig(**FAST))
    gate = tmp_path / "open"
    job = client.submit(gate_job(gate, resources={"gpus": 1}))
    wait_started(client, job.id)
    client.cordon("local-0", "drain")
    later = client.submit(JobSpec(argv=["true"], resources={"gpus": 1}))
    gate.touch()
    assert client.wait(job.id, timeout=60)[0].state is JobState.succeeded
    assert client.wait(later.id, timeout=0.5)[0].state is JobState.pending
    result: list = []
    threading.Thread(target=lambda: result.append(client.uncordon("local-0", timeout=60))).start()
    assert client.wait(later.id, timeout=60)[0].state is JobState.succeeded
    wait_until(lambda: result, what="uncordon to return")


def test_k_infra_failures_on_a_node_quarantine_it(start_compute, tmp_path):
    health = HealthConfig(infra_failures_to_quarantine=2, **FAST)
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1, health=health)
    # The good node stays busy until the gate opens, so the bad one keeps being offered work after each probe.
    gate = tmp_path / "gate"
    script = (f'if [ "$CUDA_VISIBLE_DEVICES" = 0 ]; then echo "NCCL error: unhandled system error"; exit 1; fi; '
              f'while [ ! -e "{gate}" ]; do sleep 0.05; done')
    jobs = [client.submit(JobSpec(argv=["sh", "-c", script], resources={"gpus": 1})).id for _ in range(4)]
    bad = wait_until(lambda: (n := node(client, "local-0")).state is NodeState.quarantined and n, what="quarantine")
    gate.touch()
    done = client.wait(jobs, timeout=120)
    assert all(j.state is JobState.succeeded and j.retries_used == 0 for j in done)
    assert "2 infra failures" in bad.reason
    assert sum(j.infra_retries_used for j in done) >= 2


def test_user_failures_spend_retries_and_keep_the_classified_excerpt(start_compute, tmp_path):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1, health=HealthConfig(**FAST))
    code = "print('step 1 loss 2.3'); raise ValueError('lr must be positive')"
    job = client.submit(JobSpec(argv=["python3", "-c", code], max_retries=1, retry_backoff_s=0.01))
    done = client.wait(job.id, timeout=60)[0]
    assert done.state is JobState.failed and done.retries_used == 1 and done.infra_retries_used == 0
    for attempt in done.attempts:
        assert (attempt.outcome, attempt.failure_class) == (AttemptOutcome.failed, FailureClass.user)
        lines = attempt.log_excerpt.splitlines()
        assert lines[0].startswith("[autoresearch] user failure (rule python_traceback)")
        assert lines[-1] == "ValueError: lr must be positive"
    oom = client.submit(JobSpec(argv=["sh", "-c", "echo 'torch.OutOfMemoryError: CUDA out of memory.'; exit 1"]))
    attempt = client.wait(oom.id, timeout=60)[0].attempts[0]
    assert attempt.failure_class is FailureClass.resource and "(rule cuda_oom)" in attempt.log_excerpt


def test_faults_are_refused_on_a_real_node(start_compute, tmp_path, monkeypatch):
    real_gpu_host(tmp_path / "bin", monkeypatch)
    client = start_compute()
    assert [(n.name, n.gpus, n.virtual) for n in client.nodes()] == [("local", [0, 1, 2, 3], False)]
    with pytest.raises(FaultRefused, match="'local' is a real node"):
        client.inject_fault("local", "ecc")
    assert "fault_injected" not in kinds(client, "local")


def test_failure_rules_from_the_config_classify_through_the_daemon(start_compute, tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text("- name: stale_nfs\n  class: infra\n  pattern: 'Stale file handle'\n"
                     "  explanation: the shared filesystem dropped the node\n")
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1,
                           health=HealthConfig(failure_rules=str(rules), **FAST))
    script = 'if [ "$AR_ATTEMPT" = 1 ]; then echo "OSError: [Errno 116] Stale file handle"; exit 1; fi'
    job = client.submit(JobSpec(argv=["sh", "-c", script], resources={"gpus": 1}, max_retries=0))
    done = client.wait(job.id, timeout=60)[0]
    first, second = done.attempts
    assert done.state is JobState.succeeded and second.node != first.node
    assert first.log_excerpt.startswith("[autoresearch] infra failure (rule stale_nfs): the shared filesystem")
