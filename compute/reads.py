"""The store's rows as plain JSON-ready dicts, with nothing but sqlite3 and json (no pydantic).

`job_views` is the one row -> dict mapping of jobs: `compute.rows` builds the typed `Job` records
from it, and the CLI (autoresearch/cli/jobs_cmds.py) prints it as `jobs status --json`
and `jobs list --json`, so both print the same fields and values (`Job.model_dump(mode="json")`,
key for key, in the records' field order). Nodes likewise: `node_view` is the one mapping of a
nodes row (`compute.rows.node_from_row` validates it into a `Node`), and `slot_counts` the one
place GPU slots are counted (`compute.nodes.slot_usage` validates its rows into `NodeStatus`es;
`compute status|nodes` print them). `open_store` opens an existing store for such reads;
`pending_reasons` says which of some jobs still wait in the queue, and why.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from compute.paths import ComputePaths
from compute.schema import ATTEMPT_COLUMNS, JOB_COLUMNS, MIGRATIONS, TABLES

BUSY_TIMEOUT_MS = 30000


def open_store(paths: ComputePaths) -> sqlite3.Connection | None:
    """A connection to this home's store when it exists with its whole schema, else None (then
    `compute.Store` must open it: it creates, upgrades or refuses a lost store, with its message)."""
    if not (paths.db.is_file() and paths.db_marker.is_file()):
        return None
    conn = sqlite3.connect(paths.db, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    try:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if present.issuperset(TABLES) and all(
            column in {r[1] for r in conn.execute(f"PRAGMA table_info({table})")} for table, column in MIGRATIONS
        ):  # an older store lacking a column is upgraded by compute.Store first
            return conn
    except sqlite3.DatabaseError:
        pass
    conn.close()
    return None


def job_views(conn: sqlite3.Connection, job_ids: list[str],
              spec: Callable[[str], Any] = json.loads) -> list[dict[str, Any]]:
    """Jobs with their attempts, in the order of `job_ids` (unknown ids skipped), as dicts shaped
    like `Job.model_dump(mode="json")`; `spec` turns the stored spec JSON into the `spec` value."""
    if not job_ids:
        return []
    marks = ",".join("?" * len(job_ids))
    rows = conn.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id IN ({marks})", job_ids).fetchall()
    attempts: dict[str, list[dict[str, Any]]] = {}
    for arow in conn.execute(
        f"SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE job_id IN ({marks}) ORDER BY job_id, number", job_ids
    ):
        attempts.setdefault(arow["job_id"], []).append(attempt_view(arow))
    waits = {w["job_id"]: w for w in conn.execute(  # written by the daemon's scheduling pass (compute/waitboard.py)
        f"SELECT * FROM job_waiting WHERE job_id IN ({marks})", job_ids)}
    by_id = {}
    for row in rows:
        wait = waits.get(row["id"]) if row["state"] == "pending" else None
        by_id[row["id"]] = {
            "id": row["id"],
            "spec": spec(row["spec"]),
            "state": row["state"],
            "priority": row["priority"],
            "created_at": row["created_at"],
            "updated_at": row["updated_at"],
            "state_reason": row["state_reason"],
            "retries_used": row["retries_used"],
            "infra_retries_used": row["infra_retries_used"],
            "checkpoint_dir": row["checkpoint_dir"],
            "not_before": row["not_before"],
            "attempts": attempts.get(row["id"], []),
            "waiting_kind": None if wait is None else wait["kind"],
            "waiting_reason": None if wait is None else wait["reason"],
            "queue_position": None if wait is None else wait["queue_position"],
            "estimated_start": None if wait is None else wait["estimated_start"],
        }
    return [by_id[job_id] for job_id in job_ids if job_id in by_id]


NO_PASS_YET = "no scheduling pass has placed it yet (is the compute daemon up? `autoresearch compute status`)"
"""What `pending_reasons` says of a pending job no scheduling pass has given a reason yet."""


def pending_reasons(conn: sqlite3.Connection, job_ids: list[str]) -> dict[str, str]:
    """Those of `job_ids` that are pending -> their waiting reason (`NO_PASS_YET` before the daemon's
    first pass over them): what a campaign shows for its trials whose job waits."""
    if not job_ids:
        return {}
    rows = conn.execute(
        "SELECT j.id, w.reason FROM jobs j LEFT JOIN job_waiting w ON w.job_id = j.id"
        f" WHERE j.state = 'pending' AND j.id IN ({','.join('?' * len(job_ids))})", job_ids)
    return {row[0]: row[1] or NO_PASS_YET for row in rows}


def attempt_view(row: sqlite3.Row) -> dict[str, Any]:
    """One attempts row, shaped like `Attempt.model_dump(mode="json")`."""
    return {
        "job_id": row["job_id"],
        "number": row["number"],
        "node": row["node"],
        "gpus": json.loads(row["gpus"]),
        "started_at": row["started_at"],
        "ended_at": row["ended_at"],
        "outcome": row["outcome"] or None,
        "exit_code": row["exit_code"],
        "failure_class": row["failure_class"] or None,
        "failure_rule": row["failure_rule"],
        "log_excerpt": row["log_excerpt"],
        "log_path": row["log_path"],
        "pid": row["pid"],
        "stop_reason": row["stop_reason"],
        "members": [{"rank": rank, **member} for rank, member in enumerate(json.loads(row["members"]))],
    }


def node_view(row: sqlite3.Row) -> dict[str, Any]:
    """One nodes row, shaped like `Node.model_dump(mode="json")`."""
    return {
        "name": row["name"],
        "gpus": json.loads(row["gpus"]),
        "state": row["state"],
        "health": row["health"],
        "reason": row["reason"],
        "virtual": bool(row["virtual"]),
        "last_probe_at": row["last_probe_at"],
        "address": row["address"],
        "cpus": row["cpus"],
    }


def node_views(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every node, by name (`node_view`)."""
    return [node_view(row) for row in conn.execute("SELECT * FROM nodes ORDER BY name")]


HELD_SQL = "SELECT node, gpus, members FROM attempts WHERE outcome IS NULL ORDER BY started_at"
"""The rows `held_slots` reads: the running attempts."""


def held_slots(rows: Iterable[sqlite3.Row]) -> list[tuple[str, list[int]]]:
    """(node, GPUs) of every slice the running attempts (`HELD_SQL`'s rows) hold: an attempt's
    own, or one per gang member."""
    held: list[tuple[str, list[int]]] = []
    for row in rows:
        members = json.loads(row["members"])
        held += [(m["node"], list(m["gpus"])) for m in members] or [(row["node"], json.loads(row["gpus"]))]
    return held


def slot_counts(nodes: Iterable[dict[str, Any]],
                held: Iterable[tuple[str, Sequence[int]]]) -> list[dict[str, Any]]:  # fmt: skip
    """Each node (`node_view`s) with its used and free GPU slots, from the (node, gpus) of every
    running attempt, shaped like `NodeStatus.model_dump(mode="json")`.

    The one place slots are counted: free slots are 0 on a node that is not active.
    """
    used: Counter[str] = Counter()
    running: Counter[str] = Counter()
    for node, gpus in held:
        used[node] += len(gpus)
        running[node] += 1
    return [
        {"name": n["name"], "state": n["state"], "health": n["health"], "reason": n["reason"], "virtual": n["virtual"],
         "last_probe_at": n["last_probe_at"], "gpus": n["gpus"], "gpus_used": used[n["name"]],
         "gpus_free": max(len(n["gpus"]) - used[n["name"]], 0) if n["state"] == "active" else 0,
         "running": running[n["name"]]}
        for n in nodes
    ]


def count_by_state(conn: sqlite3.Connection) -> dict[str, int]:
    """How many jobs are in each state (states without jobs left out)."""
    return {row["state"]: row["n"] for row in conn.execute("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state")}


def list_job_ids(
    conn: sqlite3.Connection,
    states: Iterable[str] | None = None,
    labels: dict[str, str] | None = None,
    min_priority: int | None = None,
    max_priority: int | None = None,
    limit: int = 100,
    offset: int = 0,
) -> list[str]:
    """Ids of the jobs, newest first, filtered by state names, labels (all must match) and priority."""
    where: list[str] = []
    params: list[object] = []
    if states is not None:
        values = list(states)
        where.append(f"state IN ({','.join('?' * len(values))})")
        params += values
    for key, value in (labels or {}).items():
        where.append("id IN (SELECT job_id FROM job_labels WHERE key=? AND value=?)")
        params += [key, value]
    if min_priority is not None:
        where.append("priority >= ?")
        params.append(min_priority)
    if max_priority is not None:
        where.append("priority <= ?")
        params.append(max_priority)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(f"SELECT id FROM jobs {clause} ORDER BY seq DESC LIMIT ? OFFSET ?", [*params, limit, offset])
    return [row["id"] for row in rows]
