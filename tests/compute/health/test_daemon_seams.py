"""HealthMonitor through the seams the daemon uses: `check(nodes, now)`, `ready`, `classify_failure`,
with the store's Node records and the real scheduling function."""

from __future__ import annotations

import sys
import time

import pytest

from compute.health import CommandProbe, FaultInjector, GpuProbe, HealthConfig, HealthMonitor
from compute.records import FailureClass, HealthStatus, Node, NodeState
from compute.scheduler import NodeView, PendingJob, SchedulerConfig, schedule
from tests.compute.health.helpers import LOGS

CONFIG = HealthConfig(release_after_passes=2, release_pass_spacing_s=0, recheck_backoff_s=0.2, probe_workers=2)


@pytest.fixture
def monitor(tmp_path, fake_smi):
    fake_smi.use("healthy_8x_h100.txt")
    probes = [GpuProbe(nvidia_smi=fake_smi.path), CommandProbe([sys.executable, "-c", "pass"])]
    m = HealthMonitor(CONFIG, probes=probes, faults=FaultInjector(tmp_path / "faults"))
    yield m
    m.close()


class Store:
    """The part of the compute store the seam touches: node records, written back as returned."""

    def __init__(self, n: int = 3):
        self.nodes = {f"local-{i}": Node(name=f"local-{i}", gpus=[2 * i, 2 * i + 1], virtual=True) for i in range(n)}
        self.events: list[Node] = []

    def tick(self, monitor: HealthMonitor) -> list[Node]:
        changed = monitor.check(list(self.nodes.values()), time.time())
        for node in changed:
            self.nodes[node.name] = node
        self.events += changed
        return changed

    def until(self, monitor: HealthMonitor, done, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < deadline, f"timed out; nodes: {self.nodes}"
            self.tick(monitor)
            time.sleep(0.02)


def test_every_probe_result_comes_back_as_a_node_update(monitor):
    store = Store()
    assert not any(monitor.ready(n, time.time()) for n in store.nodes), "no work before the preflight probe"
    store.until(monitor, lambda: all(n.last_probe_at for n in store.nodes.values()))
    assert {n.reason for n in store.events} == {"gpu+command: healthy"}
    assert all(monitor.ready(n, time.time()) for n in store.nodes)


def test_a_fault_quarantines_through_check_and_no_job_of_the_next_100_lands_there(monitor):
    store = Store()
    store.until(monitor, lambda: all(monitor.ready(n, time.time()) for n in store.nodes))
    injected = time.time()
    monitor.inject_fault("local-1", "ecc", now=injected)
    store.until(monitor, lambda: store.nodes["local-1"].state is NodeState.quarantined)
    bad = store.nodes["local-1"]
    assert bad.health is HealthStatus.critical and "ecc_uncorrected" in bad.reason
    assert time.time() - injected < 30

    placed: dict[str, list[str]] = {}
    pending = [PendingJob(f"job-{i}", 50, 1, i, injected) for i in range(100)]
    while pending:  # jobs finish at once: each round places up to the free slots
        now = time.time()
        views = [NodeView(n.name, tuple(n.gpus), n.state is NodeState.active and monitor.ready(n.name, now))
                 for n in store.nodes.values()]
        decision = schedule(pending, [], views, now, SchedulerConfig())
        assert decision.start
        for p in decision.start:
            placed.setdefault(p.node, []).append(p.job_id)
        started = {p.job_id for p in decision.start}
        pending = [j for j in pending if j.job_id not in started]
    assert sum(map(len, placed.values())) == 100
    assert "local-1" not in placed


def test_cordon_and_uncordon_made_in_the_store(monitor):
    store = Store(2)
    store.until(monitor, lambda: all(monitor.ready(n, time.time()) for n in store.nodes))
    store.nodes["local-0"] = store.nodes["local-0"].model_copy(
        update={"state": NodeState.cordoned, "reason": "cordoned: fan swap"})
    store.tick(monitor)
    assert monitor.node("local-0").state is NodeState.cordoned and not monitor.ready("local-0", time.time())

    store.nodes["local-0"] = store.nodes["local-0"].model_copy(update={"state": NodeState.active})  # `uncordon`
    changed = store.tick(monitor)
    back = next(n for n in changed if n.name == "local-0")
    assert back.state is NodeState.cordoned, "stays out until a probe passes"
    assert back.reason == "uncordoned: returns after its next passing probe"
    store.until(monitor, lambda: store.nodes["local-0"].state is NodeState.active)
    assert store.nodes["local-0"].reason == "uncordoned and passed a probe"


def test_multi_gpu_readiness_asks_for_the_nccl_round_by_itself(monitor):
    store = Store(1)
    store.until(monitor, lambda: monitor.ready("local-0", time.time()))
    assert not monitor.ready("local-0", time.time(), job_gpus=2)
    (due,) = monitor.due(time.time())
    assert due.include_nccl  # no torch here: the nccl probe skips, which passes
    store.until(monitor, lambda: monitor.ready("local-0", time.time(), job_gpus=2))


def test_classify_failure_fits_the_daemon_seam(monitor):
    tail = (LOGS / "nccl_watchdog_timeout.log").read_text()
    assert monitor.classify_failure(-6, 6, tail) is FailureClass.infra
    assert monitor.classify(-6, tail).rule == "nccl_timeout"


def test_infra_failures_reported_by_the_daemon_quarantine_at_the_next_check(monitor):
    store = Store(1)
    store.until(monitor, lambda: monitor.ready("local-0", time.time()))
    for job in ("job-a", "job-b", "job-c"):
        monitor.on_infra_failure("local-0", job, time.time())
    (node,) = store.tick(monitor)
    assert node.state is NodeState.quarantined and "3 infra failures" in node.reason


def test_nodes_gone_from_the_store_are_dropped(monitor):
    store = Store(2)
    store.tick(monitor)
    del store.nodes["local-1"]
    store.tick(monitor)
    assert [n.target.name for n in monitor.nodes()] == ["local-0"]
