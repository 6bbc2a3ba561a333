"""Fault injection for tests and drills: `inject-fault NODE thermal|ecc|xid|nccl|down|gang_nccl|throttle`.

An injected fault makes the node's next probe report the matching critical check, and
the node's running attempts (if the daemon finds any before that probe) fail that way:
the daemon kills them and appends `Fault.log_lines()` to their logs, so the classifier
sees what a real fault would leave (an NCCL error, an Xid, an ECC error ...).

`gang_nccl` is different: the node's probes pass and its running attempts go on; the next gang
preflight (compute/health/gang_preflight.py) of a member started there fails as a broken NCCL
link would, so the gang requeues without the node (the fault is then used up).

`throttle` is not critical either: the node's next probes report a *degraded* SW thermal slowdown
(the node stays in service) and its running attempts go on, slowed as a throttled GPU would be;
campaigns flag the results of trials it overlapped as suspect (docs/results.md).

Where faults live: one JSON file per node under a directory the daemon names
(`$AUTORESEARCH_HOME/compute/faults/<node>.json`). A file, not a map inside the daemon,
so a fault survives a daemon restart in the middle of a drill and a person can see what
is armed (`ls`, `cat`); writes are atomic (write + rename) and the daemon is the only
writer in normal use. Only virtual nodes take faults: a real node is refused.
"""

from __future__ import annotations

import enum
import json
import os
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from compute.health.report import Check, HealthReport, NodeTarget
from compute.records import HealthStatus

MONITOR_KILL_MARKER = "[autoresearch] stopped by the health monitor"
"""First words of the line the daemon appends to an attempt's log when the health monitor
stops it (quarantine or fault); the classifier's `health_monitor_kill` rule matches it."""


class FaultKind(str, enum.Enum):
    """What an injected fault imitates."""

    thermal = "thermal"
    ecc = "ecc"
    xid = "xid"
    nccl = "nccl"
    down = "down"
    gang_nccl = "gang_nccl"
    """The next gang preflight's all-reduce on the node fails; its probes and attempts are untouched."""
    throttle = "throttle"
    """The node's next probes report a degraded SW thermal slowdown; its attempts keep running."""


class FaultRefused(ValueError):
    """A fault was asked for a node that cannot take one (a real node)."""


class Fault(BaseModel):
    """A fault armed on one node."""

    model_config = ConfigDict(frozen=True)

    node: str
    """The (virtual) node it is armed on."""
    kind: FaultKind
    """What it imitates."""
    injected_at: float
    """Unix time it was injected."""
    probes_left: int = 1
    """How many more probes of the node it turns critical."""
    attempts_pending: bool = True
    """Whether it still has to fail the node's running attempts."""
    preflight_pending: bool = False
    """Whether it still has to fail the next gang preflight of a member started on the node."""

    def check(self, node: NodeTarget) -> Check:
        """The check a probe of the node reports while the fault is armed (critical, except `throttle`)."""
        gpu = node.gpus[0] if node.gpus else 0
        name, value, threshold, what = {
            FaultKind.thermal: (f"gpu{gpu}.hw_thermal_slowdown", 97.0, 92.0,
                                f"GPU {gpu} at 97 C with HW thermal slowdown active"),
            FaultKind.ecc: (f"gpu{gpu}.ecc_uncorrected", 2, 0, f"GPU {gpu} has 2 volatile uncorrected ECC errors"),
            FaultKind.xid: (f"gpu{gpu}.xid", 79, None, f"Xid 79 on GPU {gpu}: GPU has fallen off the bus"),
            FaultKind.nccl: ("nccl.all_reduce", False, True, "NCCL all-reduce failed: unhandled system error"),
            FaultKind.down: ("node.reachable", False, True, "node is down and does not answer"),
            FaultKind.gang_nccl: ("gang_preflight.all_reduce", False, True,
                                  "the next gang preflight all-reduce on this node fails"),
            FaultKind.throttle: (f"gpu{gpu}.sw_thermal_slowdown", True, False,
                                 f"clocks of GPU {gpu} are held down by sw thermal slowdown (88 C)"),
        }[self.kind]
        status = HealthStatus.degraded if self.kind is FaultKind.throttle else HealthStatus.critical
        return Check(name=name, status=status, value=value, threshold=threshold,
                     message=f"injected fault: {what}")

    def report(self, node: NodeTarget, ts: float) -> HealthReport:
        """The report of a probe of `node` while the fault is armed."""
        return HealthReport.from_checks(node.name, "fault", [self.check(node)], ts)

    def log_lines(self) -> list[str]:
        """Lines the daemon appends to a running attempt's log when the fault fails it."""
        line = {
            FaultKind.thermal: f"{MONITOR_KILL_MARKER}: GPU hw thermal slowdown at 97 C on node {self.node}",
            FaultKind.ecc: "RuntimeError: CUDA error: uncorrectable ECC error encountered",
            FaultKind.xid: "NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.",
            FaultKind.nccl: (
                "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), "
                "NCCL version 2.21.5"
            ),
            FaultKind.down: f"[autoresearch] node lost: node {self.node} went down",
            FaultKind.gang_nccl: "[autoresearch] gang preflight failed: injected fault: NCCL all-reduce failed",
            FaultKind.throttle: f"[autoresearch] GPU clocks throttled (sw thermal slowdown) on node {self.node}",
        }[self.kind]
        return [f"[autoresearch] injected fault '{self.kind.value}' on node {self.node} (drill)", line]


def parse_kind(kind: FaultKind | str) -> FaultKind:
    """A fault kind from its name, with an error that lists the names."""
    try:
        return FaultKind(kind)
    except ValueError:
        names = "|".join(k.value for k in FaultKind)
        raise ValueError(f"unknown fault kind {kind!r}: use one of {names}") from None


class FaultInjector:
    """Arms and consumes faults, one JSON file per node under `directory`."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.directory = Path(directory)
        self._lock = threading.Lock()

    def inject(self, node: NodeTarget, kind: FaultKind | str, now: float, probes: int = 1) -> Fault:
        """Arm a fault on a virtual node; it replaces one already armed there."""
        kind = parse_kind(kind)
        if not node.virtual:
            raise FaultRefused(
                f"node {node.name!r} is a real node: faults can be injected only into virtual nodes "
                "(start the daemon with `autoresearch compute up --virtual-nodes N` for drills); "
                f"to take a real node out of service use `autoresearch compute cordon {node.name}`"
            )
        if probes < 1:
            raise ValueError(f"probes must be 1 or more, not {probes}")
        fault = Fault(node=node.name, kind=kind, injected_at=now, probes_left=probes)
        if kind is FaultKind.gang_nccl:
            fault = Fault(node=node.name, kind=kind, injected_at=now, probes_left=0, attempts_pending=False,
                          preflight_pending=True)
        elif kind is FaultKind.throttle:  # probes see it; attempts run on, slowed
            fault = Fault(node=node.name, kind=kind, injected_at=now, probes_left=probes, attempts_pending=False)
        with self._lock:
            self._write(fault)
        return fault

    def armed(self) -> list[str]:
        """Nodes with a fault file (one directory listing: cheap enough for every daemon tick)."""
        try:
            names = os.listdir(self.directory)
        except FileNotFoundError:
            return []
        return sorted(n.removesuffix(".json") for n in names if n.endswith(".json"))

    def pending(self, node: str) -> Fault | None:
        """The fault armed on `node`, if any (without consuming it)."""
        with self._lock:
            return self._read(node)

    def take_probe_fault(self, node: str) -> Fault | None:
        """Consume one probe's worth of the node's fault. A critical one quarantines the node
        (its attempts requeued by the monitor), so the fault stops failing attempts as well."""
        with self._lock:
            fault = self._read(node)
            if fault is None or fault.probes_left < 1:
                return None
            left = fault.model_copy(update={"probes_left": fault.probes_left - 1, "attempts_pending": False})
            self._keep_or_drop(left)
            return fault

    def take_attempt_fault(self, node: str) -> Fault | None:
        """Consume the fault's attempt part: call when the node has running attempts to fail."""
        with self._lock:
            fault = self._read(node)
            if fault is None or not fault.attempts_pending:
                return None
            left = fault.model_copy(update={"attempts_pending": False})
            self._keep_or_drop(left)
            return fault

    def take_preflight_fault(self, node: str) -> Fault | None:
        """Consume the fault's gang-preflight part: call when a gang member starts on the node."""
        with self._lock:
            fault = self._read(node)
            if fault is None or not fault.preflight_pending:
                return None
            self._keep_or_drop(fault.model_copy(update={"preflight_pending": False}))
            return fault

    def clear(self, node: str) -> bool:
        """Disarm the node's fault; True if there was one."""
        with self._lock:
            path = self._path(node)
            existed = path.exists()
            path.unlink(missing_ok=True)
            return existed

    def _path(self, node: str) -> Path:
        if not node or "/" in node or node.startswith("."):
            raise ValueError(f"bad node name {node!r} for a fault file")
        return self.directory / f"{node}.json"

    def _read(self, node: str) -> Fault | None:
        path = self._path(node)
        try:
            return Fault.model_validate_json(path.read_text())
        except FileNotFoundError:
            return None
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(map(str, first["loc"])) or "file"
            raise ValueError(f"{path}: not a valid fault file ({where}: {first['msg']}); "
                             "delete it to disarm the fault") from None

    def _keep_or_drop(self, fault: Fault) -> None:
        if fault.probes_left > 0 or fault.attempts_pending or fault.preflight_pending:
            self._write(fault)
        else:
            self._path(fault.node).unlink(missing_ok=True)

    def _write(self, fault: Fault) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self._path(fault.node)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(fault.model_dump(mode="json")))
        os.replace(tmp, path)
