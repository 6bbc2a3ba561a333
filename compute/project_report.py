"""`compute projects` as plain data, computed once: each project's quotas and what its jobs hold,
read from the store with sqlite3 (no pydantic).

`project_rows` gives the JSON of each `ProjectStatus` (compute/projects.py), key for key:
`compute.usage.project_report` (what `Client.projects` returns) validates them, and
`autoresearch compute projects` prints them as they are. A project that has jobs but was never set
shows the defaults (`compute.project_defaults`).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from compute.clock import Now
from compute.project_defaults import DEFAULT_PROJECT, FAIR_SHARE_HALF_LIFE_S, PROJECT_DEFAULTS
from compute.quota_usage import decayed
from compute.quota_view import ProjectView, borrowed_attempts
from compute.sched_records import RunningAttempt

Read = Callable[[str, Sequence[Any]], Sequence[sqlite3.Row]]
"""Runs one query on the store: `Store.read`, or a sqlite3 connection's (`reader`)."""

RUNNING_SQL = (
    "SELECT a.job_id, a.number, a.node, a.gpus, a.members, a.started_at, a.started_boot, j.priority, j.preemptible,"
    " COALESCE(json_extract(j.spec, '$.project'), ?) AS project,"
    " COALESCE(json_extract(j.spec, '$.borrowed_only'), 0) AS borrowed_only,"
    " COALESCE(json_extract(j.spec, '$.resources.cpus'), 1.0) AS cpus"
    " FROM attempts a JOIN jobs j ON j.id = a.job_id WHERE a.outcome IS NULL ORDER BY a.started_at"
)
"""The running attempts, with what project accounting reads of their jobs."""
PENDING_SQL = (
    "SELECT COALESCE(json_extract(spec, '$.project'), ?) AS project, COUNT(*) AS n FROM jobs"
    " WHERE state = 'pending' GROUP BY project"
)


def half_life(info: Mapping[str, Any] | None) -> float:
    """The fair-share half-life of the daemon whose `daemon_info` this is (the default without one)."""
    return ((info or {}).get("config") or {}).get("fair_share_half_life_s") or FAIR_SHARE_HALF_LIFE_S


def reader(conn: sqlite3.Connection) -> Read:
    """`Read` on a sqlite3 connection (rows as `sqlite3.Row`)."""

    def read(sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        return conn.execute(sql, params).fetchall()

    return read


def running_attempts(read: Read, now: Now) -> list[RunningAttempt]:
    """Every slice the running attempts hold: an attempt's own, or one per gang member (as the
    scheduling pass counts them), started_at rebased to `now` (compute/clock.py)."""
    out = []
    for r in read(RUNNING_SQL, (DEFAULT_PROJECT,)):
        placed = [(m["node"], tuple(m["gpus"])) for m in json.loads(r["members"])] or [(r["node"], tuple(json.loads(r["gpus"])))]
        started = now.rebase(r["started_at"], r["started_boot"])
        out += [RunningAttempt(r["job_id"], r["number"], node, gpus, r["priority"], bool(r["preemptible"]), started,
                               project=r["project"], borrowed_only=bool(r["borrowed_only"]), cpus=r["cpus"])
                for node, gpus in placed]  # fmt: skip
    return out


def project_rows(read: Read, half_life_s: float, now: float) -> list[dict[str, Any]]:
    """Every configured project, and every other project that has jobs, as `ProjectStatus` JSON:
    quotas, GPUs and CPUs in use, borrowed and lent, pending jobs, fair-share usage at `now`."""
    stored = {r["name"]: r for r in read("SELECT * FROM projects ORDER BY name", ())}
    running = running_attempts(read, Now.read())
    pending = Counter({r["project"]: r["n"] for r in read(PENDING_SQL, (DEFAULT_PROJECT,))})
    total = sum(len(json.loads(r["gpus"])) for r in read("SELECT gpus FROM nodes WHERE state = 'active'", ()))
    settings = {name: _settings(r) for name, r in stored.items()}
    views = {name: ProjectView(name, s["quota_gpus"], s["weight"], s["borrow"], s["lend"], quota_cpus=s["quota_cpus"])
             for name, s in settings.items()}  # fmt: skip
    borrowed = borrowed_attempts(running, views)
    in_use: Counter[str] = Counter()
    over: Counter[str] = Counter()
    cpus: dict[str, float] = defaultdict(float)
    for a in running:
        in_use[a.project] += len(a.gpus)
        cpus[a.project] += a.cpus
        if (a.job_id, a.attempt) in borrowed:
            over[a.project] += len(a.gpus)
    # Borrowed GPUs come first from capacity no quota covers, then from lenders' unused quota,
    # largest unused first.
    left = max(0, sum(over.values()) - max(0, total - sum(s["quota_gpus"] for s in settings.values())))
    lent: dict[str, int] = {}
    unused = {n: max(0, s["quota_gpus"] - (in_use[n] - over[n])) for n, s in settings.items() if s["lend"]}
    for name in sorted(unused, key=lambda n: (-unused[n], n)):
        lent[name] = min(left, unused[name])
        left -= lent[name]
    out = []
    for name in sorted(set(stored) | set(in_use) | set(pending)):
        s = settings.get(name) or _settings(None)
        usage = decayed(stored[name]["usage_gpu_s"], stored[name]["usage_at"], now, half_life_s) if name in stored else 0.0
        out.append({"name": name, "configured": name in stored, **s, "in_use": in_use[name],
                    "cpus_in_use": round(cpus.get(name, 0.0), 3), "borrowed": over[name], "lent": lent.get(name, 0),
                    "pending": pending[name], "fair_share_usage": round(usage / 3600, 4)})  # fmt: skip
    return out


def _settings(row: sqlite3.Row | None) -> dict[str, Any]:
    """A project's settings, in `ProjectStatus`'s order, as the JSON of its values (a stored row's,
    else the defaults)."""
    d = PROJECT_DEFAULTS
    if row is None:
        return {"quota_gpus": d.quota_gpus, "quota_cpus": d.quota_cpus, "weight": d.weight,
                "max_priority": d.max_priority, "borrow": d.borrow, "lend": d.lend}  # fmt: skip
    return {"quota_gpus": int(row["quota_gpus"]), "quota_cpus": None if row["quota_cpus"] is None else float(row["quota_cpus"]),
            "weight": float(row["weight"]), "max_priority": int(row["max_priority"]), "borrow": bool(row["borrow"]),
            "lend": bool(row["lend"])}  # fmt: skip
