"""The quarantine policy, driven by plain reports and a `now` we choose."""

from __future__ import annotations

import pytest

from compute.health import (
    Check,
    HealthConfig,
    HealthReport,
    NodeAction,
    NodeTarget,
    ProbeReason,
    QuarantinePolicy,
)
from compute.records import HealthStatus, NodeState

CONFIG = HealthConfig(
    probe_interval_s=300, preflight_ttl_s=900, infra_failures_to_quarantine=3, infra_failure_window_s=600,
    release_after_passes=3, release_pass_spacing_s=60, recheck_backoff_s=30, recheck_backoff_max_s=240,
)


def report(status: HealthStatus, ts: float, node: str = "n1", probe: str = "gpu+cuda") -> HealthReport:
    check = Check(name="gpu0.temperature", status=status, value=97.0 if status != "ok" else 40.0, threshold=92.0,
                  message="hot" if status != "ok" else "fine")
    return HealthReport.from_checks(node, probe, [check], ts)


ok = HealthStatus.ok
critical = HealthStatus.critical


@pytest.fixture
def policy() -> QuarantinePolicy:
    p = QuarantinePolicy(CONFIG)
    p.add(NodeTarget(name="n1", gpus=(0, 1), virtual=True), now=0)
    p.add(NodeTarget(name="n2", gpus=(2, 3), virtual=True), now=0)
    return p


def due_at(policy, now, **kw) -> dict[str, ProbeReason]:
    return {d.node: d.reason for d in policy.probes_due(now, **kw)}


def test_a_new_node_is_probed_before_its_first_job(policy):
    assert due_at(policy, 0) == {"n1": ProbeReason.preflight, "n2": ProbeReason.preflight}
    assert not policy.ready("n1", 0)
    policy.on_report(report(ok, 1), now=2)
    assert policy.ready("n1", 2)
    assert due_at(policy, 2) == {"n2": ProbeReason.preflight}


def test_runtime_interval_and_preflight_ttl(policy):
    policy.on_report(report(ok, 0), now=0)
    assert "n1" not in due_at(policy, 299)
    assert due_at(policy, 300)["n1"] is ProbeReason.runtime
    assert policy.ready("n1", 900)
    assert not policy.ready("n1", 901), "a stale result keeps the node from new work"
    assert due_at(policy, 901)["n1"] is ProbeReason.preflight


def test_a_critical_probe_quarantines_at_once(policy):
    policy.on_report(report(ok, 0), now=0)
    decision = policy.on_report(report(critical, 10), now=11)
    assert decision.action is NodeAction.quarantine
    assert decision.state is NodeState.quarantined and decision.health is critical
    assert "gpu0.temperature" in decision.reason
    assert not policy.ready("n1", 11)


def test_degraded_is_shown_but_does_not_quarantine(policy):
    decision = policy.on_report(report(HealthStatus.degraded, 0), now=0)
    assert (decision.action, decision.state, decision.health) == (NodeAction.none, NodeState.active,
                                                                  HealthStatus.degraded)
    assert policy.ready("n1", 1)


def test_k_infra_failures_within_the_window_quarantine(policy):
    policy.on_report(report(ok, 0), now=0)
    assert policy.on_infra_failure("n1", "job-a", now=100).action is NodeAction.none
    assert policy.on_infra_failure("n1", "job-b", now=200).action is NodeAction.none
    decision = policy.on_infra_failure("n1", "job-c", now=300)
    assert decision.action is NodeAction.quarantine
    assert "3 infra failures" in decision.reason and "job-c" in decision.reason


def test_infra_failures_outside_the_window_do_not_add_up(policy):
    policy.on_report(report(ok, 0), now=0)
    for t in (0, 500, 1000, 1500):
        assert policy.on_infra_failure("n1", f"job-{t}", now=t).action is NodeAction.none
    assert policy.get("n1").state is NodeState.active


def test_quarantined_node_is_reprobed_with_exponential_backoff(policy):
    policy.on_report(report(critical, 0), now=0)
    assert "n1" not in due_at(policy, 29)
    assert due_at(policy, 30)["n1"] is ProbeReason.recheck
    waits = []
    now = 30
    for _ in range(5):
        decision = policy.on_report(report(critical, now), now=now)
        assert decision.action is NodeAction.stay_out
        waits.append(policy.get("n1").next_probe_at - now)
        now = policy.get("n1").next_probe_at
    assert waits == [60, 120, 240, 240, 240]


def test_returns_only_after_m_spaced_passes_in_a_row(policy):
    policy.on_report(report(critical, 0), now=0)
    actions = []
    for t in (30, 60, 90, 120, 150):  # passes 30 s apart: only those at 30, 90 and 150 count
        actions.append(policy.on_report(report(ok, t), now=t).action)
    assert actions == [NodeAction.stay_out] * 4 + [NodeAction.release]
    node = policy.get("n1")
    assert node.state is NodeState.active and "passed 3 probes in a row" in node.reason
    assert "gpu0.temperature" in node.reason, "the release says what the node was out for"


def test_a_flapping_node_stays_quarantined_through_the_hysteresis(policy):
    policy.on_report(report(critical, 0), now=0)
    now = 0.0
    for i in range(20):  # pass, pass, fail, pass, pass, fail ... never 3 in a row
        now += 60
        status = critical if i % 3 == 2 else ok
        decision = policy.on_report(report(status, now), now=now)
        assert decision.action is NodeAction.stay_out, f"probe {i} released a flapping node"
        assert decision.state is NodeState.quarantined
    assert policy.get("n1").passes < CONFIG.release_after_passes


def test_a_probe_started_before_the_quarantine_does_not_count_toward_release(policy):
    policy.on_report(report(ok, 0), now=0)
    for job in ("a", "b", "c"):
        policy.on_infra_failure("n1", job, now=100)
    decision = policy.on_report(report(ok, 95), now=101)
    assert decision.action is NodeAction.stay_out and policy.get("n1").passes == 0


def test_cordoned_node_returns_only_after_uncordon_and_a_passing_probe(policy):
    policy.on_report(report(ok, 0), now=0)
    assert policy.cordon("n1", "swapping a fan", now=10).state is NodeState.cordoned
    assert not policy.ready("n1", 11)
    assert policy.on_report(report(ok, 20), now=20).state is NodeState.cordoned, "a pass alone is not enough"
    decision = policy.uncordon("n1", now=30)
    assert (decision.action, decision.state) == (NodeAction.stay_out, NodeState.cordoned)
    assert due_at(policy, 30)["n1"] is ProbeReason.recheck, "probed at once after uncordon"
    assert policy.on_report(report(ok, 25), now=31).state is NodeState.cordoned, "probe started before uncordon"
    decision = policy.on_report(report(ok, 31), now=32)
    assert (decision.action, decision.state) == (NodeAction.release, NodeState.active)
    assert policy.ready("n1", 33)


def test_an_uncordoned_node_that_fails_its_probe_goes_to_quarantine(policy):
    policy.cordon("n1", "", now=0)
    policy.uncordon("n1", now=10)
    decision = policy.on_report(report(critical, 11), now=12)
    assert (decision.action, decision.state) == (NodeAction.quarantine, NodeState.quarantined)
    assert "after uncordon" in decision.reason


def test_uncordon_of_an_active_node_changes_nothing(policy):
    assert policy.uncordon("n1", now=0).action is NodeAction.none


def test_multi_gpu_jobs_need_a_fresh_nccl_pass(policy):
    policy.on_report(report(ok, 0), now=0)
    assert policy.ready("n1", 1, job_gpus=1)
    assert not policy.ready("n1", 1, job_gpus=2)
    (due,) = [d for d in policy.probes_due(1, nccl_for={"n1"}) if d.node == "n1"]
    assert due.include_nccl
    policy.on_report(report(ok, 2, probe="gpu+cuda+nccl"), now=3)
    assert policy.ready("n1", 4, job_gpus=2)
    assert "n1" not in due_at(policy, 5, nccl_for={"n1"})


def test_nodes_restored_as_quarantined_are_rechecked_at_once():
    p = QuarantinePolicy(CONFIG)
    p.add(NodeTarget(name="n9"), now=50, state=NodeState.quarantined, reason="gpu critical: ECC")
    assert due_at(p, 50) == {"n9": ProbeReason.recheck}
    assert not p.ready("n9", 50)


def test_unknown_node_names_the_known_ones(policy):
    with pytest.raises(KeyError, match="known nodes are n1, n2"):
        policy.on_infra_failure("n7", "job-x", now=0)


def test_a_requested_probe_is_due_at_once_and_only_once(policy):
    policy.on_report(report(ok, 0), now=0)
    assert "n1" not in due_at(policy, 10)
    policy.request_probe("n1")
    assert due_at(policy, 10)["n1"] is ProbeReason.requested
    policy.on_report(report(ok, 10), now=11)
    assert "n1" not in due_at(policy, 12)


def test_an_infra_failure_below_k_holds_the_node_until_its_probe_answers(policy):
    policy.on_report(report(ok, ts=1), now=1)
    assert policy.ready("n1", now=2)
    decision = policy.on_infra_failure("n1", "job-a", now=3)
    assert decision.state is NodeState.active and "probing it before it takes new work" in decision.reason
    assert not policy.ready("n1", now=3) and due_at(policy, 3)["n1"] is ProbeReason.requested
    policy.on_report(report(ok, ts=4), now=4)
    assert policy.ready("n1", now=4)
