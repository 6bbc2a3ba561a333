"""Why a pending job is not running: the typed reason one scheduling pass gives for each job
it did not start, and the earliest time a block of GPUs frees (for `estimated_start`).

`schedule` (compute/scheduler.py) produces a `WaitEntry` for every pending job it leaves
waiting (a plain tuple: a pass over 10k jobs cannot afford 10k records or strings), which
`describe` turns into a `Waiting` with its text; the daemon adds `backoff` for jobs still in their retry backoff, stores the reasons
(compute/store.py, table `job_waiting`) and the Client, CLI and MCP show them as
`waiting_reason`, `queue_position` and `estimated_start`. Pure functions, like the scheduler.
"""

from __future__ import annotations

import enum
import time
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast


class WaitKind(str, enum.Enum):
    """The kind of reason a pending job waits."""

    no_fit = "no_fit"
    """No node has enough free GPU slots in one block right now."""
    no_cpus = "no_cpus"
    """A job without GPUs: no node that takes work has that many free CPUs right now (nodes that count CPUs)."""
    too_big = "too_big"
    """No node that takes work has that many GPU slots at all."""
    node_unavailable = "node_unavailable"
    """The nodes big enough are cordoned, quarantined or not yet probed."""
    excluded = "excluded"
    """Every node big enough is excluded for it (a recent infra failure there, or no fresh NCCL check)."""
    behind = "behind"
    """Slots were free, but jobs ahead of it in the queue took them."""
    reservation = "reservation"
    """The free slots it would fit are held for a bigger job ahead of it (anti-starvation)."""
    preempting = "preempting"
    """Lower-priority attempts are being stopped to make room for it."""
    stopping = "stopping"
    """Attempts that are already stopping will free the slots it needs."""
    backoff = "backoff"
    """It failed and waits out its retry backoff."""
    no_fit_nodes = "no_fit_nodes"
    """A gang: fewer nodes than it spans have enough free GPU slots right now."""
    too_few_nodes = "too_few_nodes"
    """A gang: fewer nodes that take work than it spans have that many GPU slots at all."""
    quota = "quota"
    """Its project's quota is in use and it may not borrow (the project does not borrow, or the job is not preemptible)."""
    borrowing = "borrowing"
    """Its project is over its quota and no idle GPU can be lent (lenders' unused quota is held for them)."""
    fair_share = "fair_share"
    """Idle GPUs went to borrowing projects with a lower weighted usage first (fair share)."""
    reclaiming = "reclaiming"
    """Borrowed attempts are being stopped so that its project gets its quota back."""
    cpu_quota = "cpu_quota"
    """Its project's running attempts hold so many CPUs that its own would go beyond the project's CPU quota."""
    preempt_limit = "preempt_limit"
    """The pass already plans to stop as many attempts as it may (`SchedulerConfig.preempt_max_victims`)."""
    staged = "staged"
    """Handed to a node, which starts it the moment the attempt now holding its GPUs there exits
    (compute/daemon_staging.py)."""


KIND = types.SimpleNamespace(**{k.name: k for k in WaitKind})
"""`WaitKind`'s members as plain attributes, for the scheduling pass: reading an Enum's member costs
about 0.5 us in Python 3.11 (seven times a plain attribute), and a pass over 10k jobs reads thousands."""

WaitEntry = tuple[WaitKind, int, tuple[object, ...]]
"""(kind, 1-based place among the waiting jobs in scheduling order, the text's arguments)."""

_TEXT = {
    WaitKind.no_fit: "needs {0} on one node; the largest free block is {1} ({2})",
    WaitKind.too_big: "needs {0} on one node; the largest node taking work has {1}",
    WaitKind.no_cpus: "needs {0:g} CPU(s) on one node; the most free on a node taking work is {1:g} ({2})",
    WaitKind.excluded: "excluded from {0} (a recent infra failure there, or no fresh NCCL check yet)",
    WaitKind.node_unavailable: "node {0} is {1}",
    WaitKind.behind: "behind {0} higher-priority job(s)",
    WaitKind.reservation: "held for {0} (reservation)",
    WaitKind.preempting: "preempting {0} lower-priority attempt(s) on {1}",
    WaitKind.stopping: "waiting for stopping attempts to free {0}",
    WaitKind.backoff: "not before {0} (retry backoff)",
    WaitKind.no_fit_nodes: "needs {0} nodes with {1} free GPUs each; {2} {3}",
    WaitKind.too_few_nodes: "needs {0} nodes with {1} GPUs each; only {2} node(s) taking work have that many",
    WaitKind.quota: "project {0} is at its quota of {1} GPU(s) and {2}",
    WaitKind.borrowing: "project {0} is over its quota of {1} GPU(s) and no idle GPU can be lent "
                        "({2} idle, {3} held for projects' quotas)",
    WaitKind.fair_share: "fair share: the {0} lendable GPU(s) went first to project(s) {1}, whose weighted "
                         "borrowed usage is lower than {2}'s",
    WaitKind.reclaiming: "reclaiming {0} borrowed attempt(s) on {1} so that project {2} gets its quota back",
    WaitKind.cpu_quota: "project {0} is at its CPU quota: its running attempts hold {1:g} of {2:g} CPU(s) "
                        "and this job needs {3:g}",
    WaitKind.preempt_limit: "may preempt lower-priority work in the next pass: this one already stops {0} "
                            "attempt(s), the most a pass stops",
    WaitKind.staged: "staged on {0}: starts there the moment attempt {1} exits",
}


def describe(entry: WaitEntry) -> Waiting:
    """The record, with its text, of one entry of `Decision.waiting`."""
    kind, position, args = entry
    if kind in (WaitKind.no_fit, WaitKind.too_big):
        gpus = f"{args[0]} GPU" + ("" if args[0] == 1 else "s")
        if kind is WaitKind.no_fit and not args[1]:
            return Waiting(kind, f"needs {gpus} on one node; no GPU slot is free", position)
        args = (gpus, *args[1:])
    if kind is WaitKind.no_cpus and cast(float, args[0]) > cast(float, args[3]):
        return Waiting(kind, f"needs {args[0]:g} CPU(s) on one node; the largest node taking work has {args[3]:g}",
                       position)
    if kind is WaitKind.no_fit_nodes:
        has = "has them" if args[2] == 1 else "have them"
        args = (*args[:3], has + (f" ({args[3]})" if args[3] else ""))
    return Waiting(kind, _TEXT[kind].format(*args), position)


@dataclass(frozen=True, slots=True)
class Waiting:
    """Why one pending job did not start in a scheduling pass."""

    kind: WaitKind
    text: str
    """For people and agents, e.g. `needs 4 GPUs on one node; the largest free block is 2 (local-1)`."""
    position: int
    """1-based place among the waiting jobs, in scheduling order (0 while in backoff)."""


def backoff(not_before: float) -> WaitEntry:
    """The entry of a job in its retry backoff (place 0: it is not in the queue yet)."""
    return (WaitKind.backoff, 0, (time.strftime("%H:%M:%S", time.localtime(not_before)),))


def earliest_free(running: Sequence[tuple[str, int, float | None]], free: dict[str, int],
                  sizes: dict[str, int]) -> list[float | None]:
    """`out[g]`: the earliest time some node has g free slots, from running attempts' ends.

    `running`: (node, slots held, when it ends or None when unknown); `free`: free slots now
    per schedulable node; `sizes`: each node's slot count. An attempt without a known end
    (no time limit) blocks every later slot on its node. Ignores jobs ahead in the queue:
    it is the earliest a start is possible, not a promise.
    """
    ends: dict[str, list[float]] = {}
    for node, slots, end in running:
        if node in free:
            ends.setdefault(node, []).extend([float("inf") if end is None else end] * slots)
    inf = float("inf")
    largest = max(sizes.values(), default=0)
    best = [inf] * (largest + 1)
    for node, have in free.items():
        times = sorted(ends.get(node, []))
        for g in range(1, sizes[node] + 1):
            need = g - have
            best[g] = min(best[g], 0.0 if need <= 0 else (times[need - 1] if need <= len(times) else inf))
    for g in range(largest - 1, 0, -1):  # a block of g+1 free slots is also a block of g
        best[g] = min(best[g], best[g + 1])
    return [None if t == inf else t for t in best]
