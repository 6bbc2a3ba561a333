"""Nodes in the store beyond scheduling: health records, cordon and uncordon, fault drills.

The daemon records what its `HealthMonitor` decided (`record_health`): one `probe` event
per probe result, with the checks that were not ok, and one event per change of state
(`quarantined`, `node_returned`, `node_cordoned`) or of health/reason (`node_health`).
People and agents (CLI, `Client`) write requests the daemon's monitor picks up at its
next tick: `cordon_node` sets the node cordoned; `request_uncordon` sets it back to
active, which the monitor turns into "cordoned until a probe passes", so the node takes
work again only after `node_returned`; `inject_fault` writes a fault file for a virtual
node. `wait_uncordoned` waits for the verdict of that probe.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from compute.errors import ComputeError
from compute.health import UNCORDON_REQUESTED, Fault, FaultInjector, FaultKind, HealthReport, NodeTarget
from compute.paths import ComputePaths
from compute.reads import HELD_SQL, held_slots, slot_counts
from compute.records import HealthStatus, Node, NodeState
from compute.store import Store

_STATE_EVENT = {NodeState.quarantined: "quarantined", NodeState.active: "node_returned",
                NodeState.cordoned: "node_cordoned"}


class UncordonFailed(ComputeError):
    """An uncordoned node failed its probe (it is quarantined now) or was not probed in time."""


class NodeStatus(BaseModel):
    """A node as `compute nodes` shows it: state, health, last reason and GPU slots."""

    model_config = ConfigDict(frozen=True)

    name: str
    """Node name (`local`, `local-0` ...)."""
    state: NodeState
    """active, quarantined (health) or cordoned (a person)."""
    health: HealthStatus
    """Status of its last probe."""
    reason: str
    """The reason of its last state or health change."""
    virtual: bool
    """Its GPU slots have no physical GPU behind them (a host without GPUs, or a slice of it for
    tests; fault drills allowed)."""
    last_probe_at: float | None
    """Unix time of its last probe, None before the first."""
    gpus: list[int]
    """Its GPU slots."""
    gpus_used: int
    """Slots held by running attempts."""
    gpus_free: int
    """Slots free for new work (0 while the node is not active)."""
    running: int
    """Attempts running on it."""


def node_status(store: Store) -> list[NodeStatus]:
    """Every node with its used and free GPU slots."""
    return slot_usage(store.nodes(), held_slots(store.read(HELD_SQL)))


def slot_usage(nodes: Sequence[Node], held: Iterable[tuple[str, Sequence[int]]]) -> list[NodeStatus]:
    """Each node with its used and free GPU slots, from the (node, gpus) of every running attempt
    (counted by `compute.reads.slot_counts`, the one place slots are counted)."""
    return [NodeStatus.model_validate(row) for row in slot_counts((n.model_dump(mode="json") for n in nodes), held)]


def get_node(store: Store, name: str) -> Node:
    """The node called `name`; ComputeError naming the known nodes if there is none."""
    nodes = {n.name: n for n in store.nodes()}
    if name not in nodes:
        known = ", ".join(nodes) or "none yet (start the daemon with `autoresearch compute up`)"
        raise ComputeError(f"unknown node {name!r} in {store.paths.home}: known nodes are {known}")
    return nodes[name]


def record_health(store: Store, before: dict[str, Node], changed: Sequence[Node],
                  reports: Sequence[HealthReport]) -> None:
    """Store the monitor's verdicts of one tick: probe events, then node rows and their changes."""
    if not changed and not reports:
        return
    with store.transaction() as conn:
        for r in reports:
            failing = [c.model_dump(mode="json") for c in r.failing]
            store.event(conn, "probe", r.reason, node=r.node, now=r.ts + r.duration_s,
                        data={"probe": r.probe, "status": r.status.value, "duration_s": round(r.duration_s, 4),
                              "checks": len(r.checks), "failing": failing, **({"hardware": r.hardware} if r.hardware else {})})
        for node in changed:
            old = before.get(node.name)
            if old is None:
                continue
            # Only if nobody (cordon, uncordon) changed the row since `before` was read: the
            # person's change wins and the monitor mirrors it at its next check.
            done = conn.execute(
                "UPDATE nodes SET state=?, health=?, reason=?, last_probe_at=? WHERE name=? AND state=? AND reason=?",
                (node.state.value, node.health.value, node.reason, node.last_probe_at, node.name, old.state.value,
                 old.reason)).rowcount
            if not done or (old.state, old.health, old.reason) == (node.state, node.health, node.reason):
                continue
            kind = _STATE_EVENT[node.state] if node.state != old.state else "node_health"
            store.event(conn, kind, node.reason, node=node.name,
                        data={"state": node.state.value, "health": node.health.value, "was": old.state.value})


def cordon_node(store: Store, name: str, reason: str = "") -> Node:
    """Take a node out of service: no new work; running attempts finish."""
    node = get_node(store, name)
    why = f"cordoned: {reason}" if reason else "cordoned by a person"
    with store.transaction() as conn:
        conn.execute("UPDATE nodes SET state=?, reason=? WHERE name=?", (NodeState.cordoned.value, why, name))
        store.event(conn, "node_cordoned", why, node=name, data={"was": node.state.value})
    return get_node(store, name)


def request_uncordon(store: Store, name: str) -> int | None:
    """Ask the daemon to return a cordoned node after a passing probe; the request's event id.

    None when the node is active already. A quarantined node is refused: health checks took
    it out and only passing probes bring it back.
    """
    node = get_node(store, name)
    if node.state is NodeState.active:
        return None
    if node.state is NodeState.quarantined:
        raise ComputeError(
            f"node {name} is quarantined by its health checks ({node.reason}); it returns by itself after "
            "enough passing probes in a row. `autoresearch compute nodes` shows its progress"
        )
    with store.transaction() as conn:
        conn.execute("UPDATE nodes SET state=?, reason=? WHERE name=?",
                     (NodeState.active.value, UNCORDON_REQUESTED, name))
        store.event(conn, "uncordon_requested", "returns after its next passing probe", node=name)
        return int(conn.execute("SELECT last_insert_rowid()").fetchone()[0])


def wait_uncordoned(store: Store, name: str, since_id: int, timeout: float) -> Node:
    """Wait for the probe after an uncordon request: the node if it passed, else ComputeError."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for event in store.events(node=name, since_id=since_id):
            if event.kind == "node_returned":
                return get_node(store, name)
            if event.kind == "quarantined":
                raise UncordonFailed(f"node {name} failed its probe after uncordon and is quarantined: {event.reason}")
        time.sleep(0.05)
    raise UncordonFailed(
        f"node {name} was not probed within {timeout:g}s of the uncordon request; it is still out of service "
        f"and returns at its next passing probe. Is the daemon running (`autoresearch compute status`)?"
    )


def inject_fault(paths: ComputePaths, store: Store, name: str, kind: FaultKind | str, probes: int = 1) -> Fault:
    """Arm a fault drill on a virtual node (FaultRefused, a ValueError, on a real one)."""
    fault = FaultInjector(paths.faults).inject(NodeTarget.of(get_node(store, name)), kind, time.time(), probes)
    with store.transaction() as conn:
        store.event(conn, "fault_injected", f"drill: {fault.kind.value} armed for {probes} probe(s)", node=name,
                    data=fault.model_dump(mode="json"))
    return fault
