"""The daemon's writes to the store: start, stop, end attempts; sync nodes.

Each function is one transaction with one event row (reading functions write nothing).
Only the daemon calls these; clients use the request methods of `Store`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compute.clock import Now, boot_id
from compute.endings import Ending, AttemptStopReason
from compute.records import JobState, Node
from compute.states import AttemptOutcome
from compute.scheduler import PendingJob
from compute.spec import DEFAULT_PROJECT, JobSpec
from compute.rows import node_from_row
from compute.store import Store


@dataclass(frozen=True)
class Member:
    """One member of a live gang attempt."""

    rank: int
    node: str
    gpus: tuple[int, ...]
    log_path: str


def members_of(text: str) -> tuple[Member, ...]:
    """The members column of an attempt row (empty for a one-node attempt)."""
    return tuple(Member(r, m["node"], tuple(m["gpus"]), m["log_path"]) for r, m in enumerate(json.loads(text)))


@dataclass(frozen=True)
class LiveAttempt:
    """An attempt with no outcome yet, joined with what the daemon needs of its job.

    `started_at` and `kill_at` are rebased onto the wall clock as it read when the row was read
    (compute/clock.py): the time since them is boot-clock time, whatever the wall clock did."""

    job_id: str
    number: int
    node: str
    gpus: tuple[int, ...]
    started_at: float
    handle: dict[str, Any] | None
    stop: AttemptStopReason | None
    kill_at: float | None
    killed: bool
    log_path: str
    priority: int
    preemptible: bool
    time_limit_s: float | None
    grace_s: float | None
    cancel_requested: str | None
    progress_timeout_s: float | None = None
    members: tuple[Member, ...] = ()
    """For a gang: every member in rank order (rank 0 is `node`, `gpus`, `log_path`)."""
    project: str = DEFAULT_PROJECT
    borrowed_only: bool = False
    checkpoint_dir: str = ""
    cpus: float = 1.0
    """CPUs it holds on its node (`resources.cpus`; on each member's node for a gang)."""

    @property
    def key(self) -> str:
        return f"{self.job_id}.{self.number}"

    def placed(self) -> list[tuple[str, tuple[int, ...]]]:
        """(node, GPUs) of each slice it holds: one, or one per gang member."""
        return [(m.node, m.gpus) for m in self.members] or [(self.node, self.gpus)]

    def member_keys(self) -> list[str]:
        """The backend's keys: the attempt's own, or one per gang member (`<key>.r<rank>`)."""
        return [f"{self.key}.r{m.rank}" for m in self.members] if self.members else [self.key]


@dataclass(frozen=True)
class Started:
    """A new attempt row, ready to launch."""

    job_id: str
    number: int
    spec: JobSpec
    checkpoint_dir: str
    log_path: Path
    members: tuple[Member, ...] = ()


def live_attempts(store: Store, now: Now | None = None) -> list[LiveAttempt]:
    now = now or Now.read()
    rows = store.read(
        "SELECT a.job_id, a.number, a.node, a.gpus, a.started_at, a.started_boot, a.handle, a.stop_reason,"
        " a.kill_at, a.kill_at_boot,"
        " a.killed, a.log_path, a.members, j.priority, j.preemptible, j.cancel_requested,"
        " json_extract(j.spec, '$.time_limit_s') AS time_limit_s,"
        " json_extract(j.spec, '$.grace_s') AS grace_s,"
        " json_extract(j.spec, '$.progress_timeout_s') AS progress_timeout_s, j.checkpoint_dir,"
        f" COALESCE(json_extract(j.spec, '$.project'), '{DEFAULT_PROJECT}') AS project,"
        " COALESCE(json_extract(j.spec, '$.borrowed_only'), 0) AS borrowed_only,"
        " COALESCE(json_extract(j.spec, '$.resources.cpus'), 1.0) AS cpus"
        " FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE a.outcome IS NULL ORDER BY a.started_at"
    )
    return [
        LiveAttempt(
            job_id=r["job_id"], number=r["number"], node=r["node"], gpus=tuple(json.loads(r["gpus"])),
            started_at=now.rebase(r["started_at"], r["started_boot"]),
            handle=json.loads(r["handle"]) if r["handle"] else None,
            stop=AttemptStopReason(r["stop_reason"]) if r["stop_reason"] else None,
            kill_at=None if r["kill_at"] is None else now.rebase(r["kill_at"], r["kill_at_boot"]),
            killed=bool(r["killed"]), log_path=r["log_path"], priority=r["priority"],
            preemptible=bool(r["preemptible"]), time_limit_s=r["time_limit_s"], grace_s=r["grace_s"],
            cancel_requested=r["cancel_requested"], members=members_of(r["members"]),
            progress_timeout_s=r["progress_timeout_s"], project=r["project"], borrowed_only=bool(r["borrowed_only"]),
            checkpoint_dir=r["checkpoint_dir"], cpus=r["cpus"],
        )
        for r in rows
    ]


def pending_jobs(store: Store, now: Now) -> tuple[list[PendingJob], dict[str, float]]:
    """Jobs ready to schedule, and those still backing off (job id -> not_before, rebased)."""
    ready, backing_off = [], {}
    for r in store.read(
        "SELECT id, priority, gpus, seq, queued_at, not_before, not_before_boot, excluded_nodes, preemptible,"
        " COALESCE(json_extract(spec, '$.resources.nodes'), 1) AS nodes,"
        f" COALESCE(json_extract(spec, '$.project'), '{DEFAULT_PROJECT}') AS project,"
        " COALESCE(json_extract(spec, '$.borrowed_only'), 0) AS borrowed_only,"
        " COALESCE(json_extract(spec, '$.resources.cpus'), 1.0) AS cpus FROM jobs WHERE state = 'pending'"
    ):
        not_before = now.rebase(r["not_before"], r["not_before_boot"]) if r["not_before"] else 0.0
        if not_before > now.wall:
            backing_off[r["id"]] = not_before
            continue
        excluded = frozenset(json.loads(r["excluded_nodes"]))
        ready.append(PendingJob(r["id"], r["priority"], r["gpus"], r["seq"], r["queued_at"], excluded, nodes=r["nodes"],
                                project=r["project"], preemptible=bool(r["preemptible"]),
                                borrowed_only=bool(r["borrowed_only"]), cpus=r["cpus"]))
    return ready, backing_off


def next_attempt(store: Store, job_id: str) -> Started | None:
    """The attempt `start_attempt` would make of a pending job now, without writing (a staged one:
    compute/daemon_staging.py); None if the job is not pending."""
    rows = store.read("SELECT j.state, j.spec, j.checkpoint_dir, (SELECT COALESCE(MAX(number), 0) + 1 FROM attempts"
                      " WHERE job_id=j.id) AS number FROM jobs j WHERE j.id=?", (job_id,))
    if not rows or rows[0]["state"] != JobState.pending.value:
        return None
    row = rows[0]
    return Started(job_id, row["number"], JobSpec.model_validate_json(row["spec"]), row["checkpoint_dir"],
                   store.paths.log_path(job_id, row["number"]))


def start_attempt(store: Store, job_id: str, node: str, gpus: tuple[int, ...],
                  placed: tuple[tuple[str, tuple[int, ...]], ...] = (), borrowed: bool = False,
                  at: float | None = None) -> Started | None:
    """pending -> running with a new attempt row; None if the job is no longer pending.
    `placed`: a gang's (node, GPUs) per rank; each member gets its own log. `borrowed`: it runs
    beyond its project's quota. `at`: when it started, if before now (a staged attempt's node
    started it: compute/daemon_staging.py)."""
    clock = Now.read()
    now = clock.wall if at is None else at
    with store.transaction() as conn:
        row = conn.execute("SELECT state, spec, checkpoint_dir FROM jobs WHERE id=?", (job_id,)).fetchone()
        if row is None or row["state"] != JobState.pending.value:
            return None
        number = conn.execute(
            "SELECT COALESCE(MAX(number), 0) + 1 FROM attempts WHERE job_id=?", (job_id,)
        ).fetchone()[0]
        log_path = store.paths.log_path(job_id, number)
        members = tuple(Member(r, n, g, str(store.paths.log_path(job_id, number, r))) for r, (n, g) in enumerate(placed))
        conn.execute(
            "INSERT INTO attempts (job_id, number, node, gpus, started_at, started_boot, log_path, members)"
            " VALUES (?,?,?,?,?,?,?,?)",
            (job_id, number, node, json.dumps(list(gpus)), now, clock.boot_at(now), str(log_path),
             json.dumps([{"node": m.node, "gpus": list(m.gpus), "log_path": m.log_path} for m in members])),
        )
        reason = f"attempt {number} started on {node}" + (f" with GPUs {','.join(map(str, gpus))}" if gpus else "")
        if members:
            reason = f"attempt {number} started on {len(members)} nodes: " + ", ".join(
                f"{m.node} (rank {m.rank}, GPUs {','.join(map(str, m.gpus))})" for m in members)
        if borrowed:
            reason += " (borrowed: beyond its project's quota, reclaimable)"
        conn.execute(
            "UPDATE jobs SET state=?, state_reason=?, updated_at=? WHERE id=?",
            (JobState.running.value, reason, now, job_id),
        )
        store.event(conn, "started", reason, job_id=job_id, attempt=number, node=node,
                    data={"gpus": list(gpus), "borrowed": borrowed}, now=now)
    return Started(job_id, number, JobSpec.model_validate_json(row["spec"]), row["checkpoint_dir"], log_path, members)


def record_unwanted_start(store: Store, job_id: str, number: int, node: str, gpus: tuple[int, ...],
                          at: float) -> None:
    """A staged attempt its node started (`at`) after its job was cancelled: record it as it was,
    started and stopped at once (outcome cancelled, killed), so the job's record shows that it ran;
    the job stays cancelled. Nothing is written unless the job is cancelled."""
    clock = Now.read()
    reason = (f"attempt {number} started on {node} from staging as its job was being cancelled; "
              "stopped at once (SIGKILL)")
    with store.transaction() as conn:
        row = conn.execute("SELECT state FROM jobs WHERE id=?", (job_id,)).fetchone()
        if row is None or row["state"] != JobState.cancelled.value:
            return
        conn.execute(
            "INSERT INTO attempts (job_id, number, node, gpus, started_at, started_boot, ended_at, outcome,"
            " log_path, stop_reason, killed) VALUES (?,?,?,?,?,?,?,?,?,?,1)",
            (job_id, number, node, json.dumps(list(gpus)), at, clock.boot_at(at), max(clock.wall, at),
             AttemptOutcome.cancelled.value, str(store.paths.log_path(job_id, number)), AttemptStopReason.cancel.value),
        )
        store.event(conn, "killed", reason, job_id=job_id, attempt=number, node=node, data={"gpus": list(gpus)})


def record_handle(store: Store, job_id: str, number: int, handle: dict[str, Any]) -> None:
    """Fill in the backend's handle (and pid) of a just-launched attempt (not a state change)."""
    with store.transaction() as conn:
        conn.execute(
            "UPDATE attempts SET handle=?, pid=? WHERE job_id=? AND number=?",
            (json.dumps(handle), handle.get("pid"), job_id, number),
        )


def request_stop(store: Store, attempt: LiveAttempt, stop: AttemptStopReason, kill_at: float, reason: str) -> None:
    """Record the stop; `kill_at` (SIGKILL, end of grace) is on the wall clock as it reads now."""
    with store.transaction() as conn:
        conn.execute(
            "UPDATE attempts SET stop_reason=?, kill_at=?, kill_at_boot=? WHERE job_id=? AND number=?",
            (stop.value, kill_at, Now.read().boot_at(kill_at), attempt.job_id, attempt.number),
        )
        store.event(conn, "stop_requested", reason, job_id=attempt.job_id, attempt=attempt.number,
                    node=attempt.node, data={"stop": stop.value, "kill_at": kill_at})


def mark_killed(store: Store, attempt: LiveAttempt, reason: str) -> None:
    with store.transaction() as conn:
        conn.execute("UPDATE attempts SET killed=1 WHERE job_id=? AND number=?", (attempt.job_id, attempt.number))
        store.event(conn, "killed", reason, job_id=attempt.job_id, attempt=attempt.number, node=attempt.node)


def job_budget_row(store: Store, job_id: str) -> dict[str, Any]:
    row = store.read(
        "SELECT retries_used, infra_retries_used, cancel_requested, json_extract(spec, '$.max_retries') AS max_retries,"
        " json_extract(spec, '$.retry_backoff_s') AS backoff_s,"
        " json_extract(spec, '$.progress_timeout_s') AS progress_timeout_s FROM jobs WHERE id=?",
        (job_id,),
    )[0]
    return dict(row)


def end_attempt(store: Store, attempt: LiveAttempt, ending: Ending, exit_code: int | None,
                excerpt: str | None, rule: str | None = None, at: float | None = None) -> None:
    """Record the attempt's outcome (and `rule`, the classifier's, for a failed one) and move its
    job on, in one transaction. `at`: when it ended, if known to be before now."""
    clock = Now.read()
    now = clock.wall if at is None else at
    not_before_boot = clock.boot_at(ending.not_before) if ending.not_before else None
    kind = {JobState.pending: "requeued", JobState.succeeded: "succeeded", JobState.failed: "failed",
            JobState.cancelled: "cancelled"}[ending.job_state]
    with store.transaction() as conn:
        conn.execute(
            "UPDATE attempts SET ended_at=?, outcome=?, exit_code=?, failure_class=?, failure_rule=?, log_excerpt=?"
            " WHERE job_id=? AND number=?",
            (now, ending.outcome.value, exit_code, ending.failure_class.value if ending.failure_class else None,
             rule, excerpt, attempt.job_id, attempt.number),
        )
        excluded = set(json.loads(conn.execute(
            "SELECT excluded_nodes FROM jobs WHERE id=?", (attempt.job_id,)).fetchone()[0]))
        if ending.exclude_node:
            excluded.add(ending.exclude_node)
        conn.execute(
            "UPDATE jobs SET state=?, state_reason=?, updated_at=?, queued_at=?, not_before=?, not_before_boot=?,"
            " retries_used = retries_used + ?, infra_retries_used = infra_retries_used + ?, excluded_nodes=?"
            " WHERE id=?",
            (ending.job_state.value, ending.reason, now, now, ending.not_before, not_before_boot, int(ending.retry_spent),
             int(ending.infra_retry_spent), json.dumps(sorted(excluded)), attempt.job_id),
        )
        store.event(conn, kind, ending.reason, job_id=attempt.job_id, attempt=attempt.number, node=attempt.node,
                    data={"outcome": ending.outcome.value, "exit_code": exit_code}, now=now)


def sync_nodes(store: Store, offered: list[Node]) -> list[Node]:
    """Make the nodes table match what the backend offers; known nodes keep their state."""
    with store.transaction() as conn:
        known = {r["name"]: node_from_row(r) for r in conn.execute("SELECT * FROM nodes")}
        names = {n.name for n in offered}
        for name in sorted(set(known) - names):
            conn.execute("DELETE FROM nodes WHERE name=?", (name,))
            store.event(conn, "node_removed", "no longer offered by the backend", node=name)
        for node in offered:
            old = known.get(node.name)
            shape = (node.gpus, node.virtual, node.address, node.cpus)
            if old is not None and (old.gpus, old.virtual, old.address, old.cpus) == shape:
                continue
            conn.execute(
                "INSERT INTO nodes (name, gpus, state, health, reason, virtual, address, cpus) VALUES (?,?,?,?,?,?,?,?)"
                " ON CONFLICT(name) DO UPDATE SET gpus=excluded.gpus, virtual=excluded.virtual,"
                " address=excluded.address, cpus=excluded.cpus",
                (node.name, json.dumps(node.gpus), node.state.value, node.health.value, node.reason,
                 int(node.virtual), node.address, node.cpus),
            )
            cpus = "" if node.cpus is None else f", {node.cpus:g} CPUs"
            store.event(conn, "node_added" if old is None else "node_changed",
                        f"{len(node.gpus)} GPU slots{cpus}", node=node.name, data={"gpus": node.gpus, "cpus": node.cpus})
    return store.nodes()


def job_event(store: Store, kind: str, reason: str, job_id: str, attempt: int, node: str | None = None) -> None:
    """One event of an attempt that changes no row (e.g. what its gang preflight said)."""
    with store.transaction() as conn:
        store.event(conn, kind, reason, job_id=job_id, attempt=attempt, node=node)


def forget_other_boots(store: Store) -> None:
    """Drop boot-clock readings taken on another boot of this host than the last daemon's (they
    mean nothing now: the wall values count); the daemon calls it before its `daemon_started`
    event, which records this boot."""
    rows = store.read("SELECT data FROM events WHERE kind='daemon_started' ORDER BY id DESC LIMIT 1")
    last = json.loads(rows[0]["data"]).get("boot_id") if rows else None
    if last == boot_id() and last:
        return
    with store.transaction() as conn:
        conn.execute("UPDATE attempts SET started_boot=NULL, kill_at_boot=NULL WHERE outcome IS NULL")
        conn.execute("UPDATE jobs SET not_before_boot=NULL WHERE state='pending'")


def daemon_event(store: Store, kind: str, reason: str, data: dict[str, Any] | None = None) -> None:
    with store.transaction() as conn:
        store.event(conn, kind, reason, data=data)
