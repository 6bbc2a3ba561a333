"""What a health probe returns, what it probes, and the protocol every probe follows."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from compute.records import HealthStatus, Node

_RANK = {HealthStatus.ok: 0, HealthStatus.degraded: 1, HealthStatus.critical: 2}


def worst(statuses: Iterable[HealthStatus]) -> HealthStatus:
    """The most severe of `statuses` (ok for none)."""
    return max(statuses, key=_RANK.__getitem__, default=HealthStatus.ok)


class NodeTarget(BaseModel):
    """The node a probe looks at."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Node name, as in the compute store."""
    gpus: tuple[int, ...] = ()
    """GPU indices of this node on the host (what CUDA_VISIBLE_DEVICES would list)."""
    virtual: bool = False
    """No physical GPU behind its slots (a host without GPUs, or a slice for tests and fault drills);
    faults may be injected only here."""

    @classmethod
    def of(cls, node: Node) -> NodeTarget:
        """The probe target for a node record of the compute store."""
        return cls(name=node.name, gpus=tuple(node.gpus), virtual=node.virtual)


class Check(BaseModel):
    """One measured quantity of a probe, compared with its threshold."""

    model_config = ConfigDict(frozen=True)

    name: str
    """What was checked, e.g. `gpu3.temperature` or `command.exit_code`."""
    status: HealthStatus
    """ok, degraded or critical for this one check."""
    value: str | float | int | bool | None = None
    """What was measured (None when it could not be measured)."""
    threshold: str | float | int | bool | None = None
    """The limit it was compared with (None when there is none)."""
    message: str = ""
    """One line for a person or an agent: what is wrong and what it means."""
    skipped: str | None = None
    """Why this was not checked here (`no nvidia-smi`, `torch is not installed` ...); None when it
    was. A skipped check is ok, but says nothing about the node's health."""


class HealthReport(BaseModel):
    """The result of probing one node: its checks and their worst status."""

    model_config = ConfigDict(frozen=True)

    node: str
    """The node probed."""
    probe: str
    """The probe name (`gpu`, `cuda`, `nccl`, `command`, `fault`), or several joined by `+`."""
    status: HealthStatus
    """The worst status of the checks."""
    checks: tuple[Check, ...] = ()
    """Every check made, healthy ones included."""
    ts: float
    """Unix time the probe started: the state it saw is from then on."""
    duration_s: float = 0.0
    """How long the probe took."""
    hardware: dict[str, str] = {}
    """What the probe saw of the node's GPUs: `gpu_model` and `driver` (the gpu probe); empty otherwise."""

    @classmethod
    def from_checks(
        cls, node: str, probe: str, checks: Iterable[Check], ts: float, duration_s: float = 0.0,
        hardware: dict[str, str] | None = None,
    ) -> HealthReport:
        """A report whose status is the worst of its checks."""
        checks = tuple(checks)
        return cls(
            node=node,
            probe=probe,
            status=worst(c.status for c in checks),
            checks=checks,
            ts=ts,
            duration_s=duration_s,
            hardware=hardware or {},
        )

    @property
    def failing(self) -> tuple[Check, ...]:
        """The checks that are not ok."""
        return tuple(c for c in self.checks if c.status is not HealthStatus.ok)

    @property
    def reason(self) -> str:
        """One line naming what failed, else `healthy` and what was skipped, for node reasons and event logs:
        `gpu+cuda: skipped (no nvidia-smi)` when no probe could look, never `healthy` then."""
        bad = [c for c in self.checks if c.status is self.status and c.status is not HealthStatus.ok]
        if bad:
            text = "; ".join(f"{c.name}: {c.message}" if c.message else c.name for c in bad[:3])
            more = f" (+{len(bad) - 3} more)" if len(bad) > 3 else ""
            return f"{self.probe} {self.status.value}: {text}{more}"
        skips: dict[str, list[str]] = {}
        for c in self.checks:
            if c.skipped is not None:
                skips.setdefault(c.skipped, []).append(self.probe if c.name == "skipped" else c.name.removesuffix(".skipped"))
        if skips and all(c.skipped is not None for c in self.checks):
            return f"{self.probe}: skipped ({'; '.join(skips)})"
        skipped = "".join(f"; {', '.join(names)} skipped ({why})" for why, names in skips.items())
        return f"{self.probe}: healthy{skipped}"


def combine(node: str, reports: Iterable[HealthReport], ts: float, duration_s: float) -> HealthReport:
    """One report out of several probes' reports: checks prefixed by probe name, worst status."""
    reports = list(reports)
    checks = [c.model_copy(update={"name": f"{r.probe}.{c.name}"}) for r in reports for c in r.checks]
    probe = "+".join(r.probe for r in reports) or "none"
    seen = {key: value for r in reports for key, value in r.hardware.items()}
    return HealthReport.from_checks(node, probe, checks, ts, duration_s, seen)


def skipped(why: str, detail: str = "") -> Check:
    """An ok check saying a probe did not apply here (no GPU, no torch ...): `why` short (it goes
    into node reasons), `detail` what that means."""
    return Check(name="skipped", status=HealthStatus.ok, value=None, skipped=why,
                 message=f"skipped: {why}" + (f" ({detail})" if detail else ""))


@runtime_checkable
class HealthProbe(Protocol):
    """Looks at one node and says how healthy it is.

    Rules every probe keeps:
    - `probe` never raises for a sick node: sickness is a critical check. It may raise only
      for its own bugs (the monitor turns those into a degraded check).
    - It returns within its own timeout (a hung nvidia-smi or NCCL call is a critical check,
      not a hang): the monitor runs probes in worker threads but does not kill them.
    - A probe that does not apply (no GPU, no torch) returns status ok with one `skipped()` check:
      its `skipped` field says why, and the report's reason says skipped, never healthy.
    - It is safe to call from several threads at once for different nodes.
    """

    name: str
    """Short name: `gpu`, `cuda`, `nccl`, `command` ..."""

    def probe(self, node: NodeTarget) -> HealthReport:
        """Probe `node` now and report."""
        ...


__all__ = ["Check", "HealthProbe", "HealthReport", "NodeTarget", "combine", "skipped", "worst"]
