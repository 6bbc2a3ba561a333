"""Fault injection: armed per virtual node in a directory, consumed by probes and attempts."""

from __future__ import annotations

import pytest

from compute.health import Classifier, FaultInjector, FaultKind, FaultRefused, NodeTarget
from compute.records import FailureClass, HealthStatus

VIRTUAL = NodeTarget(name="v1", gpus=(2, 3), virtual=True)
REAL = NodeTarget(name="gpu-host-7", gpus=(0, 1, 2, 3))


@pytest.fixture
def injector(tmp_path) -> FaultInjector:
    return FaultInjector(tmp_path / "faults")


def test_a_real_node_is_refused_with_what_to_do_instead(injector):
    with pytest.raises(FaultRefused) as err:
        injector.inject(REAL, "thermal", now=0)
    text = str(err.value)
    assert "'gpu-host-7' is a real node" in text and "--virtual-nodes" in text and "compute cordon gpu-host-7" in text
    assert injector.pending("gpu-host-7") is None


def test_unknown_kind_lists_the_kinds(injector):
    with pytest.raises(ValueError, match=r"unknown fault kind 'fire': use one of thermal\|ecc\|xid\|nccl\|down"):
        injector.inject(VIRTUAL, "fire", now=0)


def test_a_fault_is_a_file_that_outlives_the_injector(injector, tmp_path):
    injector.inject(VIRTUAL, "ecc", now=5)
    assert (tmp_path / "faults" / "v1.json").exists()
    again = FaultInjector(tmp_path / "faults").pending("v1")
    assert (again.kind, again.injected_at, again.probes_left, again.attempts_pending) == (FaultKind.ecc, 5, 1, True)


def test_the_attempt_part_is_taken_once_and_the_probe_part_stays(injector):
    injector.inject(VIRTUAL, "nccl", now=0)
    assert injector.take_attempt_fault("v1").kind is FaultKind.nccl
    assert injector.take_attempt_fault("v1") is None
    assert injector.take_probe_fault("v1").kind is FaultKind.nccl
    assert injector.pending("v1") is None


def test_a_gang_nccl_fault_leaves_probes_and_attempts_alone_and_fails_one_gang_preflight(injector):
    injector.inject(VIRTUAL, "gang_nccl", now=0)
    assert injector.take_probe_fault("v1") is None and injector.take_attempt_fault("v1") is None
    assert injector.take_preflight_fault("v1").kind is FaultKind.gang_nccl
    assert injector.take_preflight_fault("v1") is None and injector.pending("v1") is None


def test_a_throttle_fault_makes_degraded_probes_and_leaves_attempts_running(injector):
    injector.inject(VIRTUAL, "throttle", now=0, probes=2)
    assert injector.take_attempt_fault("v1") is None  # its attempts are not killed
    fault = injector.take_probe_fault("v1")
    report = fault.report(VIRTUAL, ts=1)
    assert report.status is HealthStatus.degraded and report.checks[0].name == "gpu2.sw_thermal_slowdown"
    assert injector.take_probe_fault("v1").kind is FaultKind.throttle and injector.pending("v1") is None


def test_a_probe_taking_the_fault_disarms_the_attempt_part(injector):
    injector.inject(VIRTUAL, "xid", now=0)
    assert injector.take_probe_fault("v1") is not None
    assert injector.take_attempt_fault("v1") is None


def test_a_fault_can_last_several_probes_and_be_cleared(injector):
    injector.inject(VIRTUAL, "down", now=0, probes=3)
    assert injector.take_probe_fault("v1").probes_left == 3
    assert injector.take_probe_fault("v1").probes_left == 2
    assert injector.clear("v1") is True
    assert injector.take_probe_fault("v1") is None and injector.clear("v1") is False


def test_a_corrupt_fault_file_names_itself(injector, tmp_path):
    (tmp_path / "faults").mkdir()
    (tmp_path / "faults" / "v1.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"v1\.json: not a valid fault file .* delete it"):
        injector.pending("v1")


EXPECTED_RULE = {FaultKind.thermal: "health_monitor_kill", FaultKind.ecc: "ecc", FaultKind.xid: "xid",
                 FaultKind.nccl: "nccl_error", FaultKind.down: "node_lost",
                 FaultKind.gang_nccl: "gang_preflight"}


@pytest.mark.parametrize("kind", [k for k in FaultKind if k is not FaultKind.throttle])
def test_each_kind_makes_a_critical_probe_and_an_infra_failure(injector, kind):
    fault = injector.inject(VIRTUAL, kind, now=0)
    report = fault.report(VIRTUAL, ts=1)
    assert report.status is HealthStatus.critical and report.probe == "fault"
    assert report.checks[0].message.startswith("injected fault: ")
    log = "step 10 | loss 2.1\n" + "\n".join(fault.log_lines()) + "\n"
    result = Classifier().classify(-9, log)
    assert (result.failure_class, result.rule) == (FailureClass.infra, EXPECTED_RULE[kind])
