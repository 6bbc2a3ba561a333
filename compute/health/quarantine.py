"""The quarantine policy as plain records and a small class: no processes, no clock.

Rules:
- A critical probe quarantines an active node at once.
- K infra failures on an active node within a window quarantine it too.
- A quarantined node is re-probed on an exponential backoff while it fails, and returns
  only after M passing probes in a row, each at least `release_pass_spacing_s` after the
  last one counted (hysteresis): one failing probe starts the count again, so a flapping
  node stays out.
- A cordoned node (a person's decision) returns only after `uncordon` AND a passing probe
  started after the uncordon; if that probe is critical the node goes to quarantine.
- Degraded is not critical: it is shown as the node's health, and counts as passing.
- A probe asked for out of schedule (after an infra failure below K, or a fault drill)
  holds the node: it takes no new work until that probe answers.

Schedule (`probes_due`): an active node is probed before its first job and whenever its
last probe is older than the runtime interval or the preflight TTL; it takes new work only
while its last passing probe is within the TTL (`ready`). Quarantined nodes are probed on
their backoff; cordoned ones on the interval, and at once after an uncordon.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable

from pydantic import BaseModel, ConfigDict

from compute.health.config import HealthConfig
from compute.health.report import HealthReport, NodeTarget
from compute.health.torch_probes import nccl_applies
from compute.records import HealthStatus, NodeState


class NodeAction(str, enum.Enum):
    """What a policy decision asks the daemon to do with a node."""

    none = "none"
    """Nothing changes state (health or reason may have changed: store them)."""
    quarantine = "quarantine"
    """Take the node out: no new work; requeue its running attempts without spending retries."""
    stay_out = "stay_out"
    """The node stays out of service (still failing, or not enough passing probes yet)."""
    release = "release"
    """The node is back in service."""
    cordon = "cordon"
    """A person took the node out: no new work (running attempts finish)."""


class ProbeReason(str, enum.Enum):
    preflight = "preflight"
    """Never probed, or its last result is older than the preflight TTL."""
    runtime = "runtime"
    """The runtime interval has passed."""
    recheck = "recheck"
    """A quarantined node's scheduled re-probe, or an uncordoned node's probe."""
    requested = "requested"
    """Asked for explicitly (after a fault was injected, or by a person)."""


class NodeHealth(BaseModel):
    """What the policy knows about one node."""

    model_config = ConfigDict(frozen=True)

    target: NodeTarget
    """Name, GPUs, virtual."""
    state: NodeState = NodeState.active
    """active, quarantined or cordoned."""
    health: HealthStatus = HealthStatus.ok
    """Status of the last probe."""
    reason: str = ""
    """Why it is in its state (or what its last probe said)."""
    last_probe_at: float | None = None
    """Start time of the last probe reported."""
    last_ok_at: float | None = None
    """Start time of the last probe that was not critical."""
    last_nccl_ok_at: float | None = None
    """Start time of the last passing probe that included the nccl all-reduce."""
    passes: int = 0
    """Passing probes in a row counted toward release (while quarantined)."""
    last_pass_at: float | None = None
    """Start time of the last probe counted in `passes`."""
    next_probe_at: float | None = None
    """When a quarantined (or uncordoned) node is due for its next probe."""
    backoff_s: float = 0.0
    """Current wait between re-probes of a quarantined node."""
    infra_failures: tuple[float, ...] = ()
    """Times of recent infra failures on the node (within the window)."""
    uncordon_at: float | None = None
    """When a person asked to uncordon it; it returns at the next passing probe after this."""
    out_since: float | None = None
    """When it was quarantined; probes started before then do not count toward release."""
    cause: str = ""
    """Why it was quarantined, kept while it is out."""
    probe_requested: bool = False
    """Probe it at the next chance, whatever its schedule says (cleared by the next report)."""


class NodeDecision(BaseModel):
    """A policy decision about one node, with the state the daemon should store."""

    model_config = ConfigDict(frozen=True)

    node: str
    action: NodeAction
    state: NodeState
    """The node's state after the decision."""
    health: HealthStatus
    """The node's health after the decision."""
    reason: str
    """One line for the event log and `compute nodes`."""
    ts: float
    """When it was decided (the `now` passed in)."""


class ProbeDue(BaseModel):
    """A node that should be probed now."""

    model_config = ConfigDict(frozen=True)

    node: str
    reason: ProbeReason
    include_nccl: bool = False
    """Also run the nccl all-reduce (before a multi-GPU job)."""


def _fresh(at: float | None, now: float, ttl: float) -> bool:
    return at is not None and now - at <= ttl


def probes_due(
    nodes: Iterable[NodeHealth], now: float, config: HealthConfig, nccl_for: Collection[str] = ()
) -> list[ProbeDue]:
    """Nodes due for a probe at `now`. `nccl_for`: nodes a multi-GPU job may go to next."""
    due = []
    for n in nodes:
        name = n.target.name
        want_nccl = (config.nccl and name in nccl_for and len(n.target.gpus) >= 2
                     and not _fresh(n.last_nccl_ok_at, now, config.preflight_ttl_s))
        age = None if n.last_probe_at is None else now - n.last_probe_at
        if n.probe_requested:
            due.append(ProbeDue(node=name, reason=ProbeReason.requested, include_nccl=want_nccl))
        elif n.state is NodeState.quarantined or (n.state is NodeState.cordoned and n.uncordon_at is not None):
            if n.next_probe_at is None or now >= n.next_probe_at:
                due.append(ProbeDue(node=name, reason=ProbeReason.recheck))
        elif age is None or age >= config.preflight_ttl_s:
            due.append(ProbeDue(node=name, reason=ProbeReason.preflight, include_nccl=want_nccl))
        elif age >= config.probe_interval_s:
            due.append(ProbeDue(node=name, reason=ProbeReason.runtime, include_nccl=want_nccl))
        elif want_nccl and n.state is NodeState.active:
            due.append(ProbeDue(node=name, reason=ProbeReason.preflight, include_nccl=True))
    return due


class QuarantinePolicy:
    """Per-node health state and the decisions that change it. Not thread-safe: one caller."""

    def __init__(self, config: HealthConfig):
        self.config = config
        self._nodes: dict[str, NodeHealth] = {}

    def add(self, target: NodeTarget, now: float, state: NodeState = NodeState.active, reason: str = "") -> NodeHealth:
        """Track a node (again). A node restored as quarantined is re-probed at once; an active
        one needs a passing probe before it takes work."""
        out = state is NodeState.quarantined
        node = NodeHealth(target=target, state=state, reason=reason, cause=reason if out else "",
                          out_since=now if out else None, next_probe_at=now if out else None,
                          backoff_s=self.config.recheck_backoff_s)
        self._nodes[target.name] = node
        return node

    def remove(self, name: str) -> None:
        """Stop tracking a node (it left the cluster)."""
        self._nodes.pop(name, None)

    def get(self, name: str) -> NodeHealth:
        """The node's health state; KeyError naming the known nodes if it is not tracked."""
        try:
            return self._nodes[name]
        except KeyError:
            known = ", ".join(sorted(self._nodes)) or "none"
            raise KeyError(f"unknown node {name!r}: known nodes are {known}") from None

    def nodes(self) -> list[NodeHealth]:
        return list(self._nodes.values())

    def probes_due(self, now: float, nccl_for: Collection[str] = ()) -> list[ProbeDue]:
        return probes_due(self._nodes.values(), now, self.config, nccl_for)

    def ready(self, name: str, now: float, job_gpus: int = 0) -> bool:
        """Whether the node may take a new job asking `job_gpus` GPUs now (not while a probe
        asked for after a fault or an infra failure has not answered yet)."""
        n = self.get(name)
        if n.state is not NodeState.active or n.probe_requested:
            return False
        if not _fresh(n.last_ok_at, now, self.config.preflight_ttl_s):
            return False
        if self.config.nccl and nccl_applies(job_gpus, n.target):
            return _fresh(n.last_nccl_ok_at, now, self.config.preflight_ttl_s)
        return True

    def on_report(self, report: HealthReport, now: float) -> NodeDecision:
        """Apply a probe report (its `ts` is when the probe started) and decide about the node."""
        n = self.get(report.node)
        passing = report.status is not HealthStatus.critical
        update: dict = {"health": report.status, "last_probe_at": max(report.ts, n.last_probe_at or report.ts),
                        "probe_requested": False}
        if passing:
            update["last_ok_at"] = report.ts
            if "nccl" in report.probe.split("+"):
                update["last_nccl_ok_at"] = report.ts
        if n.state is NodeState.active:
            if not passing:
                return self._quarantine(n, update, report.reason, now)
            return self._set(n, {**update, "reason": report.reason}, NodeAction.none, now)
        if n.state is NodeState.cordoned:
            if n.uncordon_at is None or report.ts < n.uncordon_at:
                return self._set(n, update, NodeAction.none, now)
            if not passing:
                return self._quarantine(n, {**update, "uncordon_at": None}, f"failed its probe after uncordon: "
                                        f"{report.reason}", now)
            return self._release(n, update, "uncordoned and passed a probe", now)
        return self._recheck(n, update, report, passing, now)

    def _recheck(self, n: NodeHealth, update: dict, report: HealthReport, passing: bool, now: float) -> NodeDecision:
        c = self.config
        if not passing:
            backoff = min(n.backoff_s * 2, c.recheck_backoff_max_s)
            update |= {"passes": 0, "last_pass_at": None, "backoff_s": backoff, "next_probe_at": now + backoff,
                       "reason": f"still failing, next probe in {backoff:g} s: {report.reason}"}
            return self._set(n, update, NodeAction.stay_out, now)
        started_after = n.out_since is None or report.ts >= n.out_since
        spaced = n.last_pass_at is None or report.ts - n.last_pass_at >= c.release_pass_spacing_s
        counted = started_after and spaced
        passes = n.passes + 1 if counted else n.passes
        if passes >= c.release_after_passes:
            return self._release(n, update, f"passed {passes} probes in a row (was: {n.cause})", now)
        update |= {"passes": passes, "last_pass_at": report.ts if counted else n.last_pass_at,
                   "next_probe_at": now + c.release_pass_spacing_s,
                   "reason": f"passing probe {passes}/{c.release_after_passes}; quarantined for: {n.cause}"}
        return self._set(n, update, NodeAction.stay_out, now)

    def request_probe(self, name: str) -> None:
        """Probe the node at the next chance (after a fault drill, or when a person asks)."""
        n = self.get(name)
        self._nodes[name] = n.model_copy(update={"probe_requested": True})

    def on_infra_failure(self, name: str, job_id: str, now: float) -> NodeDecision:
        """Count an infra failure of `job_id` on the node; K within the window quarantine it."""
        c = self.config
        n = self.get(name)
        recent = tuple(t for t in n.infra_failures if now - t <= c.infra_failure_window_s) + (now,)
        if n.state is not NodeState.active:
            return self._set(n, {"infra_failures": recent}, NodeAction.none, now)
        if len(recent) >= c.infra_failures_to_quarantine:
            why = (f"{len(recent)} infra failures within {c.infra_failure_window_s:g} s "
                   f"(the last: job {job_id})")
            return self._quarantine(n, {}, why, now)
        return self._set(n, {"infra_failures": recent, "probe_requested": True,
                             "reason": f"infra failure {len(recent)}/{c.infra_failures_to_quarantine} in the "
                             f"window (job {job_id}); probing it before it takes new work"},
                         NodeAction.none, now)

    def cordon(self, name: str, reason: str, now: float) -> NodeDecision:
        """A person takes the node out of service."""
        n = self.get(name)
        why = f"cordoned: {reason}" if reason else "cordoned by a person"
        return self._set(n, {"state": NodeState.cordoned, "uncordon_at": None, "reason": why},
                         NodeAction.cordon, now)

    def uncordon(self, name: str, now: float) -> NodeDecision:
        """A person lets the node back: it returns at its next passing probe (probed at once)."""
        n = self.get(name)
        if n.state is not NodeState.cordoned:
            return self._set(n, {}, NodeAction.none, now)
        return self._set(n, {"uncordon_at": now, "next_probe_at": now,
                             "reason": "uncordoned: returns after its next passing probe"},
                         NodeAction.stay_out, now)

    def _quarantine(self, n: NodeHealth, update: dict, reason: str, now: float) -> NodeDecision:
        b = self.config.recheck_backoff_s
        update |= {"state": NodeState.quarantined, "reason": reason, "cause": reason, "out_since": now,
                   "passes": 0, "last_pass_at": None, "backoff_s": b, "next_probe_at": now + b,
                   "infra_failures": ()}
        return self._set(n, update, NodeAction.quarantine, now)

    def _release(self, n: NodeHealth, update: dict, reason: str, now: float) -> NodeDecision:
        update |= {"state": NodeState.active, "reason": reason, "passes": 0, "last_pass_at": None,
                   "next_probe_at": None, "backoff_s": self.config.recheck_backoff_s, "uncordon_at": None,
                   "infra_failures": (), "out_since": None, "cause": ""}
        return self._set(n, update, NodeAction.release, now)

    def _set(self, n: NodeHealth, update: dict, action: NodeAction, now: float) -> NodeDecision:
        new = n.model_copy(update=update)
        self._nodes[n.target.name] = new
        return NodeDecision(node=new.target.name, action=action, state=new.state, health=new.health,
                            reason=new.reason, ts=now)
