"""Projects in the compute store: a team's share of the fleet (`compute project set | rm`, `compute projects`).

A project has a guaranteed GPU quota, an optional CPU quota (a ceiling), a weight for fair share, a highest priority its jobs may
ask for, and whether it borrows idle GPUs beyond its quota and lends its unused quota. Each
change is one transaction with one event (`project_set`, `project_removed`). The daemon reads
them every pass (`project_views`) and writes back the decayed borrowed usage fair share weighs
(`save_usage`); the scheduling rules are in compute/quota.py. A job names its project in
`JobSpec.project`; the store refuses a job of an unknown project (other than `default`) or
above its project's `max_priority` (compute/project_checks.py).
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from compute.errors import ComputeError
from compute.quota_view import ProjectView
from compute.project_defaults import DEFAULT_PROJECT, PROJECT_DEFAULTS
from compute.spec import PROJECT_NAME

if TYPE_CHECKING:
    from compute.store import Store


class Project(BaseModel):
    """One project as stored."""

    model_config = ConfigDict(frozen=True)

    name: str
    quota_gpus: Annotated[int, Field(ge=0)]
    """GPUs guaranteed to its jobs."""
    weight: Annotated[float, Field(gt=0)] = PROJECT_DEFAULTS.weight
    """Its share of idle GPUs relative to other borrowing projects (fair share)."""
    max_priority: Annotated[int, Field(ge=0, le=100)] = PROJECT_DEFAULTS.max_priority
    """The highest priority its jobs may ask for; a job above it is refused at submit."""
    borrow: bool = PROJECT_DEFAULTS.borrow
    """Its jobs may run beyond the quota on idle GPUs (preemptible there, whatever their priority)."""
    lend: bool = PROJECT_DEFAULTS.lend
    """Other projects may borrow its unused quota; it reclaims it when its jobs need it."""
    usage_gpu_s: float = 0.0
    """Borrowed GPU-seconds, decayed with the daemon's `fair_share_half_life_s`, as of `usage_at`."""
    usage_at: float = 0.0
    quota_cpus: Annotated[float | None, Field(ge=0)] = PROJECT_DEFAULTS.quota_cpus
    """The most CPUs its running attempts may hold at once (a ceiling, not lent or borrowed); None: no limit."""


class ProjectStatus(BaseModel):
    """A project as `compute projects` shows it (`compute.project_report.project_rows`, validated)."""

    model_config = ConfigDict(frozen=True)

    name: str
    configured: bool
    """False for a project that has jobs but was never set (quota 0: its jobs only borrow)."""
    quota_gpus: int
    quota_cpus: float | None
    """The CPU ceiling (None: none)."""
    weight: float
    max_priority: int
    borrow: bool
    lend: bool
    in_use: int
    """GPUs its running attempts hold (guaranteed and borrowed)."""
    cpus_in_use: float
    """CPUs its running attempts hold (`resources.cpus`, what its CPU quota counts)."""
    borrowed: int
    """GPUs of those attempts that run beyond its quota (reclaimable by others)."""
    lent: int
    """GPUs of its unused quota that other projects' borrowed attempts hold now."""
    pending: int
    """Its pending jobs."""
    fair_share_usage: float
    """Borrowed GPU-hours, decayed (what fair share weighs, before dividing by the weight)."""


_ROW_FIELDS = ("name", "quota_gpus", "weight", "max_priority", "borrow", "lend", "usage_gpu_s", "usage_at", "quota_cpus")
_SETTINGS = {"quota_gpus", "quota_cpus", "weight", "max_priority", "borrow", "lend"}


def _from_row(row: sqlite3.Row) -> Project:
    return Project(**{k: row[k] for k in _ROW_FIELDS})


def load_projects(store: Store) -> list[Project]:
    return [_from_row(r) for r in store.read("SELECT * FROM projects ORDER BY name")]


def set_project(
    store: Store,
    name: str,
    quota_gpus: int | None,
    weight: float | None = None,
    max_priority: int | None = None,
    borrow: bool | None = None,
    lend: bool | None = None,
    quota_cpus: float | None = None,
) -> Project:
    """Create or change a project; options left None keep their value (or the default for a new one:
    quota 0 GPUs, no CPU quota)."""
    if not re.fullmatch(PROJECT_NAME, name):
        raise ComputeError(
            f"project name {name!r} is not valid: use letters, digits, '_', '.', '-' "
            "(at most 64, starting with a letter or digit)"
        )
    given = {"quota_gpus": quota_gpus, "quota_cpus": quota_cpus, "weight": weight, "max_priority": max_priority,
             "borrow": borrow, "lend": lend}
    now = time.time()
    with store.transaction() as conn:
        row = conn.execute("SELECT * FROM projects WHERE name=?", (name,)).fetchone()
        old = _from_row(row) if row is not None else None
        base = old.model_dump() if old is not None else {"name": name, "quota_gpus": PROJECT_DEFAULTS.quota_gpus}
        try:
            new = Project(**{**base, **{k: v for k, v in given.items() if v is not None}})
        except ValidationError as err:
            first = err.errors()[0]
            raise ComputeError(
                f"project {name!r}: {first['loc'][0]} {first['msg'].lower()}, not {first['input']!r}"
            ) from None
        conn.execute(
            "INSERT INTO projects (name, quota_gpus, quota_cpus, weight, max_priority, borrow, lend, created_at,"
            " updated_at) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(name) DO UPDATE SET quota_gpus=excluded.quota_gpus,"
            " quota_cpus=excluded.quota_cpus, weight=excluded.weight, max_priority=excluded.max_priority,"
            " borrow=excluded.borrow, lend=excluded.lend, updated_at=excluded.updated_at",
            (name, new.quota_gpus, new.quota_cpus, new.weight, new.max_priority, int(new.borrow), int(new.lend),
             now, now),
        )
        settings = new.model_dump(include=_SETTINGS)
        what = "created" if old is None else "changed"
        store.event(
            conn,
            "project_set",
            f"project {name} {what}: " + ", ".join(f"{k}={v}" for k, v in settings.items()),
            data={"project": name, **settings},
            now=now,
        )
    return new


def remove_project(store: Store, name: str) -> None:
    """Delete a project that has no pending or running job."""
    with store.transaction() as conn:
        if conn.execute("SELECT 1 FROM projects WHERE name=?", (name,)).fetchone() is None:
            raise ComputeError(f"no project {name!r} in {store.paths.home}; `autoresearch compute projects` lists them")
        active = conn.execute(
            "SELECT COUNT(*) FROM jobs WHERE state IN ('pending', 'running') AND"
            " COALESCE(json_extract(spec, '$.project'), ?) = ?",
            (DEFAULT_PROJECT, name),
        ).fetchone()[0]
        if active:
            raise ComputeError(
                f"project {name!r} has {active} pending or running job(s); cancel them or wait for "
                f"them to end (`autoresearch jobs list`), then remove it"
            )
        conn.execute("DELETE FROM projects WHERE name=?", (name,))
        store.event(conn, "project_removed", f"project {name} removed", data={"project": name})


def project_views(projects: Iterable[Project]) -> list[ProjectView]:
    """What the scheduler needs of each project (usage 0: the daemon's `UsageMeter` fills it in)."""
    return [ProjectView(p.name, p.quota_gpus, p.weight, p.borrow, p.lend, quota_cpus=p.quota_cpus) for p in projects]


def save_usage(store: Store, usage: dict[str, float], now: float) -> None:
    """Write the daemon's decayed borrowed usage (not a state change: no event)."""
    with store.transaction() as conn:
        conn.executemany(
            "UPDATE projects SET usage_gpu_s=?, usage_at=? WHERE name=?",
            [(value, now, name) for name, value in usage.items()],
        )
