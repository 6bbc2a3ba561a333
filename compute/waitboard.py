"""The daemon's side of `waiting_reason`: store what each scheduling pass said about the jobs it
left waiting, writing only what changed (a queue of 10k jobs must not cost 10k writes a tick).

Rules: the table `job_waiting` holds one row per job the last pass left waiting (rows of jobs
that started, ended or were cancelled are deleted by the next pass); only the daemon writes it;
readers show a row only while its job is pending (compute/reads.py `job_views`).
"""

from __future__ import annotations

from collections.abc import Sequence

from compute.lifecycle import LiveAttempt
from compute.scheduler import NodeView, PendingJob
from compute.store import Store
from compute.waiting import WaitEntry, backoff, describe, earliest_free

Row = tuple[str, str, int, float | None]
"""(kind, reason, queue position, estimated start) as stored."""


class WaitBoard:
    """Writes the waiting reasons of each pass to the store; remembers what it wrote."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._written: dict[str, Row] | None = None  # None: not yet written since the daemon started

    def update(self, entries: dict[str, WaitEntry], backing_off: dict[str, float], pending: Sequence[PendingJob],
               running: Sequence[LiveAttempt], nodes: Sequence[NodeView], now: float) -> None:
        """Store the pass's `entries` and a backoff reason per job in `backing_off` (id -> not_before)."""
        rows = {job_id: self._row(entry) for job_id, entry in entries.items()}
        rows |= {job_id: self._row(backoff(at)) for job_id, at in backing_off.items()}
        if rows and entries:
            estimates = self._estimates(running, nodes, now)
            for job in pending:
                row = rows.get(job.job_id)
                if row is not None and 0 < job.gpus < len(estimates):
                    rows[job.job_id] = (*row[:3], estimates[job.gpus])
        written = self._written
        if written is not None and rows == written:
            return
        changed = [(job_id, *row) for job_id, row in rows.items() if written is None or written.get(job_id) != row]
        gone = [] if written is None else [(job_id,) for job_id in written.keys() - rows.keys()]
        with self.store.transaction() as conn:
            if written is None:
                conn.execute("DELETE FROM job_waiting")
            conn.executemany("DELETE FROM job_waiting WHERE job_id=?", gone)
            conn.executemany("INSERT OR REPLACE INTO job_waiting (job_id, kind, reason, queue_position, "
                             "estimated_start) VALUES (?,?,?,?,?)", changed)
        self._written = rows

    @staticmethod
    def _row(entry: WaitEntry) -> Row:
        waiting = describe(entry)
        return waiting.kind.value, waiting.text, waiting.position, None

    @staticmethod
    def _estimates(running: Sequence[LiveAttempt], nodes: Sequence[NodeView], now: float) -> list[float | None]:
        """Per GPU count, the earliest future time a block that big frees (None: unknown or now)."""
        sizes = {n.name: len(n.gpus) for n in nodes if n.schedulable}
        held: dict[str, int] = {}
        for a in running:
            held[a.node] = held.get(a.node, 0) + len(a.gpus)
        free = {name: size - held.get(name, 0) for name, size in sizes.items()}
        ends = [(a.node, len(a.gpus), None if a.time_limit_s is None else a.started_at + a.time_limit_s)
                for a in running]
        return [t if t is not None and t > now else None for t in earliest_free(ends, free, sizes)]
