"""`HealthMonitor`: the one object the daemon talks to about node health.

It owns the probes, the quarantine policy, the failure classifier, the fault injector and
a thread pool, so a slow nvidia-smi or a hung CUDA check never stalls the daemon's loop.

Fine-grained use:

    monitor.submit(monitor.due(now))                     # start due probes in the pool
    for report in monitor.poll():                        # finished ones, never blocks
        apply(monitor.on_report(report, time.time()))    # a NodeDecision

Or the one-call step that fits the daemon's `HealthCheck` seam, `check(nodes, now)`: it
mirrors cordon/uncordon made in the store, starts due probes, collects finished ones and
returns the Node records whose state, health or reason changed (every finished probe
counts, so each probe result becomes an event).

Everything except the probes themselves runs in the caller's thread: call the methods
from one thread (the daemon's loop).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from compute.health.classifier import Classification, Classifier
from compute.health.command import CommandProbe
from compute.health.config import HealthConfig
from compute.health.faults import Fault, FaultInjector, FaultKind
from compute.health.gpu import GpuProbe
from compute.health.quarantine import NodeDecision, NodeHealth, ProbeDue, QuarantinePolicy
from compute.health.report import Check, HealthProbe, HealthReport, NodeTarget, combine
from compute.health.torch_probes import CudaProbe, NcclProbe
from compute.records import FailureClass, HealthStatus, Node, NodeState


UNCORDON_REQUESTED = "uncordon requested: returns after its next passing probe"
"""The reason a person's uncordon writes into the store (with state active), so the monitor
sees the request even when it never saw the cordon before it (both within one tick)."""


def build_probes(config: HealthConfig) -> list[HealthProbe]:
    """The probes every round runs: gpu, cuda (if enabled) and the user command (if set)."""
    probes: list[HealthProbe] = [GpuProbe(config.gpu, timeout_s=config.probe_timeout_s)]
    if config.cuda:
        probes.append(CudaProbe(timeout_s=config.probe_timeout_s))
    if config.command:
        probes.append(CommandProbe(config.command, timeout_s=config.command_timeout_s))
    return probes


class HealthMonitor:
    """Probes nodes off the main loop and turns reports and failures into node decisions."""

    def __init__(
        self,
        config: HealthConfig | None = None,
        probes: Sequence[HealthProbe] | None = None,
        nccl_probe: HealthProbe | None = None,
        faults: FaultInjector | None = None,
    ):
        self.config = config or HealthConfig()
        self.probes = list(build_probes(self.config) if probes is None else probes)
        """Probes run on every round."""
        self.nccl_probe = nccl_probe or NcclProbe(self.config.nccl_timeout_s, self.config.nccl_min_busbw_gbps)
        """Run only when a round includes nccl (before multi-GPU jobs)."""
        self.faults = faults
        """Where injected faults live; None refuses `inject_fault`."""
        self.policy = QuarantinePolicy(self.config)
        self.classifier = Classifier.from_config(self.config.failure_rules)
        """Built-in failure rules after those of `config.failure_rules`."""
        self.on_done: Callable[[], None] = lambda: None
        """Called from a probe thread each time a probe finishes (the daemon wakes its loop here)."""
        self._changed: dict[str, NodeDecision] = {}
        self._reports: list[HealthReport] = []
        self._faults_seen: dict[str, float] = {}
        self._nccl_wanted: set[str] = set()
        self._pool = ThreadPoolExecutor(self.config.probe_workers, thread_name_prefix="health-probe")
        self._in_flight: dict[str, Future[HealthReport]] = {}
        self._lock = threading.Lock()

    # nodes -----------------------------------------------------------------------------
    def add_node(self, target: NodeTarget, now: float, state: NodeState = NodeState.active,
                 reason: str = "") -> NodeHealth:
        """Track a node, e.g. from the store's Node record at daemon start (state and reason kept)."""
        return self.policy.add(target, now, state, reason)

    def node(self, name: str) -> NodeHealth:
        return self.policy.get(name)

    def nodes(self) -> list[NodeHealth]:
        return self.policy.nodes()

    def ready(self, node: str, now: float, job_gpus: int = 0) -> bool:
        """May `node` take a new job asking `job_gpus` GPUs? (active, fresh passing probe, and a
        fresh passing NCCL all-reduce for multi-GPU jobs when nccl is enabled). Asking for a
        multi-GPU job that only lacks the NCCL check puts that check in the node's next round.
        False for a node not tracked yet (never probed)."""
        if node not in {n.target.name for n in self.policy.nodes()}:
            return False
        if self.policy.ready(node, now, job_gpus):
            return True
        if job_gpus >= 2 and self.policy.ready(node, now):
            self._nccl_wanted.add(node)
        return False

    # probing ---------------------------------------------------------------------------
    def due(self, now: float, nccl_for: Collection[str] = ()) -> list[ProbeDue]:
        """Probes due now and not already running. `nccl_for`: nodes a pending multi-GPU job
        could go to (their round then includes the NCCL all-reduce)."""
        with self._lock:
            busy = set(self._in_flight)
        wanted = set(nccl_for) | self._nccl_wanted
        return [d for d in self.policy.probes_due(now, wanted) if d.node not in busy]

    def run_probe(self, node: str, include_nccl: bool = False) -> HealthReport:
        """Probe `node` now, in this thread: every probe (and nccl if asked) and any armed fault,
        combined into one report. A probe that raises gives a degraded check, not a crash."""
        return self._run(self.policy.get(node).target, include_nccl)

    def _run(self, target: NodeTarget, include_nccl: bool) -> HealthReport:
        node = target.name
        started = time.time()
        reports = []
        for probe in [*self.probes, *([self.nccl_probe] if include_nccl else [])]:
            try:
                reports.append(probe.probe(target))
            except Exception as exc:  # a bug in a probe must not take the node or the daemon down
                check = Check(name="error", status=HealthStatus.degraded,
                              message=f"probe raised {type(exc).__name__}: {exc}")
                reports.append(HealthReport.from_checks(node, probe.name, [check], time.time()))
        fault = self.faults.take_probe_fault(node) if self.faults and target.virtual else None
        if fault is not None:
            reports.append(fault.report(target, started))
        return combine(node, reports, started, time.time() - started)

    def submit(self, due: Iterable[ProbeDue]) -> list[str]:
        """Start these probes in the pool (one at a time per node); returns the nodes started."""
        started = []
        with self._lock:
            for d in due:
                if d.node in self._in_flight:
                    continue
                target = self.policy.get(d.node).target
                future = self._pool.submit(self._run, target, d.include_nccl)
                future.add_done_callback(lambda _: self.on_done())
                self._in_flight[d.node] = future
                started.append(d.node)
        return started

    def poll(self) -> list[HealthReport]:
        """Reports of probes that finished since the last call. Never blocks."""
        with self._lock:
            done = {n: f for n, f in self._in_flight.items() if f.done()}
            for n in done:
                del self._in_flight[n]
        return [f.result() for f in done.values()]

    def in_flight(self) -> list[str]:
        with self._lock:
            return sorted(self._in_flight)

    # decisions -------------------------------------------------------------------------
    def on_report(self, report: HealthReport, now: float) -> NodeDecision:
        """Apply a probe report: may quarantine, keep out, or release the node."""
        if "nccl" in report.probe.split("+"):
            self._nccl_wanted.discard(report.node)
        return self._record(self.policy.on_report(report, now))

    def on_infra_failure(self, node: str, job_id: str, now: float) -> NodeDecision:
        """Count an attempt of `job_id` classified infra on `node`; K in the window quarantine it."""
        return self._record(self.policy.on_infra_failure(node, job_id, now))

    def cordon(self, node: str, reason: str, now: float) -> NodeDecision:
        return self._record(self.policy.cordon(node, reason, now))

    def uncordon(self, node: str, now: float) -> NodeDecision:
        return self._record(self.policy.uncordon(node, now))

    def _record(self, decision: NodeDecision) -> NodeDecision:
        self._changed[decision.node] = decision
        return decision

    # the daemon's seams ----------------------------------------------------------------
    def check(self, nodes: Sequence[Node], now: float) -> list[Node]:
        """One non-blocking health step per daemon tick (the daemon's `_check_health`, compute/daemon_stops.py).

        `nodes`: the store's node records, read fresh this tick. New nodes are tracked; a
        node a person cordoned in the store is cordoned here; a cordoned node set back to
        active in the store is uncordoned here and so stays cordoned until a probe passes.
        Returns the nodes to write back: every decision since the last call (probe results,
        infra failures, cordon/uncordon), with state, health, reason and last_probe_at."""
        by_name = {n.name: n for n in nodes}
        for gone in [n.target.name for n in self.policy.nodes() if n.target.name not in by_name]:
            self.policy.remove(gone)
        for node in nodes:
            self._mirror(node, now)
        self.submit(self.due(now))
        for report in self.poll():
            if report.node in by_name:
                self.on_report(report, now)
                self._reports.append(report)
        changed, self._changed = self._changed, {}
        return [
            by_name[name].model_copy(update={"state": d.state, "health": d.health, "reason": d.reason,
                                             "last_probe_at": self.policy.get(name).last_probe_at})
            for name, d in changed.items() if name in by_name
        ]

    def take_reports(self) -> list[HealthReport]:
        """The probe reports `check` applied since the last call (the daemon stores them as events)."""
        reports, self._reports = self._reports, []
        return reports

    def _mirror(self, node: Node, now: float) -> None:
        target = NodeTarget.of(node)
        try:
            known = self.policy.get(node.name)
        except KeyError:
            self.policy.add(target, now, node.state, node.reason)
            return
        if known.target != target:
            self.policy.add(target, now, node.state, node.reason)
        elif node.state is NodeState.cordoned and known.state is not NodeState.cordoned:
            self.policy.cordon(node.name, node.reason.removeprefix("cordoned: "), now)
        elif node.state is NodeState.active and known.state is NodeState.cordoned and known.uncordon_at is None:
            self.uncordon(node.name, now)
        elif node.state is NodeState.active and node.reason == UNCORDON_REQUESTED and known.state is NodeState.active:
            self.policy.cordon(node.name, "", now)  # cordoned and uncordoned between two checks
            self.uncordon(node.name, now)

    def classify(self, exit_code: int | None, log_tail: str, signal: int | None = None) -> Classification:
        """Why an attempt failed (class, rule, matched line, explanation)."""
        return self.classifier.classify(exit_code, log_tail, signal)

    def classify_failure(self, exit_code: int, signal: int | None, log_tail: str) -> FailureClass:
        """`classify` reduced to the class."""
        return self.classifier.classify(exit_code, log_tail, signal).failure_class

    # fault drills ----------------------------------------------------------------------
    def inject_fault(self, node: str, kind: FaultKind | str, now: float, probes: int = 1) -> Fault:
        """Arm a fault on a virtual node (FaultRefused on a real one)."""
        if self.faults is None:
            raise ValueError("fault injection is off: this daemon was started without a fault directory")
        fault = self.faults.inject(self.policy.get(node).target, kind, now, probes)
        self.policy.request_probe(node)
        return fault

    def request_probe(self, node: str) -> None:
        """Probe `node` at the next `due`, whatever its schedule says."""
        self.policy.request_probe(node)

    def take_faults(self, busy: Collection[str]) -> list[Fault]:
        """Faults armed in the fault directory, by anyone (the CLI writes the files): each new one
        puts its node's probe first in line, and those on `busy` nodes (nodes with running
        attempts) are returned with their attempt part consumed: kill those attempts now and
        append `fault.log_lines()` to their logs. One directory listing per call; call it
        before `check`, so a running attempt fails the fault's way before the probe takes it."""
        if self.faults is None:
            return []
        taken = []
        tracked = {n.target.name for n in self.policy.nodes()}
        for name in self.faults.armed():
            fault = self.faults.pending(name) if name in tracked else None
            if fault is None:
                continue
            if self._faults_seen.get(name) != fault.injected_at:
                self._faults_seen[name] = fault.injected_at
                self.policy.request_probe(name)
            if name in busy and (attempt := self.faults.take_attempt_fault(name)) is not None:
                taken.append(attempt)
        return taken

    def attempt_fault(self, node: str) -> Fault | None:
        """A fault that should fail the node's running attempts now (consumed). Call it for nodes
        with running attempts; kill them and append `fault.log_lines()` to their logs."""
        return self.faults.take_attempt_fault(node) if self.faults else None

    def preflight_fault(self, node: str) -> Fault | None:
        """A `gang_nccl` fault armed on `node` (consumed): fail the gang preflight of the member
        starting there now."""
        return self.faults.take_preflight_fault(node) if self.faults else None

    def close(self, wait: bool = False) -> None:
        """Stop the pool (running probes finish on their own timeouts)."""
        self._pool.shutdown(wait=wait, cancel_futures=True)
