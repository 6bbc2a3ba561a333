"""What the store checks of a job's project at submit and on a priority change (compute/projects.py has the rest)."""

from __future__ import annotations

import sqlite3

from compute.errors import ComputeError
from compute.spec import DEFAULT_PROJECT, JobSpec


def check_job_project(conn: sqlite3.Connection, spec: JobSpec, home: str) -> None:
    """Refuse a job whose project does not exist (other than `default`) or whose priority is above its max."""
    row = conn.execute("SELECT max_priority FROM projects WHERE name=?", (spec.project,)).fetchone()
    if row is None:
        if spec.project == DEFAULT_PROJECT:
            return
        known = [r[0] for r in conn.execute("SELECT name FROM projects ORDER BY name")]
        raise ComputeError(
            f"job {spec.name!r}: project {spec.project!r} does not exist in {home}; create it with "
            f"`autoresearch compute project set {spec.project} --quota-gpus N`, or submit to "
            + (f"one of {', '.join(known)} or " if known else "")
            + f"{DEFAULT_PROJECT!r}"
        )
    check_priority(spec.name, spec.project, spec.priority, row[0])


def check_priority(job: str, project: str, priority: int, max_priority: int) -> None:
    if priority > max_priority:
        raise ComputeError(
            f"job {job!r}: priority {priority} is above project {project}'s max_priority {max_priority}; ask for "
            f"{max_priority} or lower, or raise the limit with `autoresearch compute project set {project} "
            f"--quota-gpus N --max-priority {priority}`"
        )
