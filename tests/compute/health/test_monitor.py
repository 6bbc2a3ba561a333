"""HealthMonitor: probes off the caller's thread, faults and decisions end to end."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from compute.health import (
    Check,
    CommandProbe,
    FaultInjector,
    FaultRefused,
    GpuProbe,
    HealthConfig,
    HealthMonitor,
    HealthReport,
    NodeAction,
    NodeTarget,
    build_probes,
)
from compute.records import HealthStatus, NodeState

CONFIG = HealthConfig(release_after_passes=2, release_pass_spacing_s=0, recheck_backoff_s=1, probe_workers=2)


def wait_reports(monitor: HealthMonitor, n: int, timeout: float = 60.0) -> list[HealthReport]:
    reports: list[HealthReport] = []
    deadline = time.monotonic() + timeout
    while len(reports) < n:
        assert time.monotonic() < deadline, f"only {len(reports)} of {n} probe reports came back"
        reports += monitor.poll()
        time.sleep(0.02)
    return reports


class BlockingProbe:
    """A probe that waits for a test's signal: stands in for a hung nvidia-smi."""

    name = "slow"

    def __init__(self):
        self.release = threading.Event()

    def probe(self, node: NodeTarget) -> HealthReport:
        self.release.wait(60)
        return HealthReport.from_checks(node.name, self.name, [Check(name="x", status=HealthStatus.ok)], time.time())


class BrokenProbe:
    name = "broken"

    def probe(self, node: NodeTarget) -> HealthReport:
        raise RuntimeError("parser bug")


@pytest.fixture
def drill(tmp_path, fake_smi):
    """Three virtual nodes with real probes (nvidia-smi stand-in, a command) and a fault directory."""
    fake_smi.use("healthy_8x_h100.txt")
    probes = [GpuProbe(nvidia_smi=fake_smi.path), CommandProbe([sys.executable, "-c", "pass"])]
    monitor = HealthMonitor(CONFIG, probes=probes, faults=FaultInjector(tmp_path / "faults"))
    for i in range(3):
        monitor.add_node(NodeTarget(name=f"v{i}", gpus=(2 * i, 2 * i + 1), virtual=True), now=0)
    yield monitor
    monitor.close()


def test_a_slow_probe_never_blocks_the_caller():
    probe = BlockingProbe()
    monitor = HealthMonitor(CONFIG, probes=[probe])
    monitor.add_node(NodeTarget(name="n1"), now=0)
    try:
        assert monitor.submit(monitor.due(now=0)) == ["n1"]
        assert monitor.poll() == [] and monitor.in_flight() == ["n1"]
        assert monitor.due(now=1) == [], "a node whose probe is running is not due again"
        probe.release.set()
        (report,) = wait_reports(monitor, 1)
        assert report.node == "n1" and report.probe == "slow" and report.checks[0].name == "slow.x"
        assert monitor.in_flight() == []
    finally:
        probe.release.set()
        monitor.close()


def test_a_probe_that_raises_gives_a_degraded_check():
    monitor = HealthMonitor(CONFIG, probes=[BrokenProbe()])
    monitor.add_node(NodeTarget(name="n1"), now=0)
    report = monitor.run_probe("n1")
    assert report.status is HealthStatus.degraded
    assert report.checks[0].message == "probe raised RuntimeError: parser bug"
    monitor.close()


def test_preflight_then_injected_fault_quarantines_and_passes_release(drill):
    drill.submit(drill.due(now=0))
    for report in wait_reports(drill, 3):
        assert report.status is HealthStatus.ok, report.reason
        assert report.probe == "gpu+command"
        assert drill.on_report(report, now=1).action is NodeAction.none
    assert all(drill.ready(f"v{i}", now=2) for i in range(3))

    drill.inject_fault("v1", "thermal", now=3)
    assert [(d.node, d.reason.value) for d in drill.due(now=3)] == [("v1", "requested")], "probed at once"
    fault = drill.attempt_fault("v1")  # the daemon would kill v1's running attempts with these lines
    assert fault is not None and drill.attempt_fault("v1") is None
    decision = drill.on_report(drill.run_probe("v1"), now=4)
    assert (decision.action, decision.state) == (NodeAction.quarantine, NodeState.quarantined)
    assert "injected fault" in decision.reason and "hw_thermal_slowdown" in decision.reason
    assert not drill.ready("v1", now=4) and drill.ready("v0", now=4)

    assert [d.node for d in drill.due(now=4.5)] == []
    due = drill.due(now=5)
    assert [(d.node, d.reason.value) for d in due] == [("v1", "recheck")]
    actions = []
    for now in (5, 6):
        actions.append(drill.on_report(drill.run_probe("v1"), now=now).action)
    assert actions == [NodeAction.stay_out, NodeAction.release]
    assert drill.ready("v1", now=7)


def test_faults_are_refused_on_real_nodes_and_when_off(tmp_path):
    monitor = HealthMonitor(CONFIG, probes=[], faults=FaultInjector(tmp_path / "f"))
    monitor.add_node(NodeTarget(name="host"), now=0)
    with pytest.raises(FaultRefused):
        monitor.inject_fault("host", "ecc", now=0)
    off = HealthMonitor(CONFIG, probes=[])
    off.add_node(NodeTarget(name="v", virtual=True), now=0)
    with pytest.raises(ValueError, match="fault injection is off"):
        off.inject_fault("v", "ecc", now=0)
    monitor.close()
    off.close()


def test_multi_gpu_rounds_include_nccl(drill):
    class Nccl:
        name = "nccl"
        calls: list[str] = []

        def probe(self, node):
            self.calls.append(node.name)
            return HealthReport.from_checks(node.name, "nccl", [Check(name="busbw_gbps", status=HealthStatus.ok)],
                                            time.time())

    drill.nccl_probe = Nccl()
    for report in [drill.run_probe(f"v{i}") for i in range(3)]:
        drill.on_report(report, now=1)
    assert not drill.ready("v2", now=2, job_gpus=2)
    (due,) = drill.due(now=2, nccl_for={"v2"})
    assert (due.node, due.include_nccl) == ("v2", True)
    drill.submit([due])
    (report,) = wait_reports(drill, 1)
    assert report.probe == "gpu+command+nccl" and Nccl.calls == ["v2"]
    drill.on_report(report, now=3)
    assert drill.ready("v2", now=3, job_gpus=2)


def test_build_probes_follows_the_config():
    assert [p.name for p in build_probes(HealthConfig())] == ["gpu", "cuda"]
    assert [p.name for p in build_probes(HealthConfig(cuda=False, command=["/bin/true"]))] == ["gpu", "command"]


def test_config_errors_say_what_to_fix():
    with pytest.raises(ValueError, match="recheck_backoff_max_s .* below recheck_backoff_s"):
        HealthConfig(recheck_backoff_s=60, recheck_backoff_max_s=10)
    with pytest.raises(ValueError, match="command is empty"):
        HealthConfig(command=[])
