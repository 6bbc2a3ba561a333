"""Records from the compute store's rows: jobs with their attempts and waiting reasons, attempts, nodes."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from compute.records import Attempt, AttemptMember, AttemptOutcome, FailureClass, Job, JobState, Node
from compute.schema import ATTEMPT_COLUMNS, JOB_COLUMNS
from compute.spec import JobSpec


def load_jobs(conn: sqlite3.Connection, job_ids: list[str]) -> list[Job]:
    """Jobs (with their attempts) in the order of `job_ids`; unknown ids are skipped."""
    if not job_ids:
        return []
    marks = ",".join("?" * len(job_ids))
    rows = conn.execute(f"SELECT {JOB_COLUMNS} FROM jobs WHERE id IN ({marks})", job_ids).fetchall()
    attempts: dict[str, list[Attempt]] = {}
    for arow in conn.execute(
        f"SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE job_id IN ({marks}) ORDER BY job_id, number",
        job_ids,
    ):
        attempts.setdefault(arow["job_id"], []).append(attempt_from_row(arow))
    waits = {w["job_id"]: w for w in conn.execute(  # written by the daemon's scheduling pass (compute/waitboard.py)
        f"SELECT * FROM job_waiting WHERE job_id IN ({marks})", job_ids)}
    by_id = {
        row["id"]: Job(
            id=row["id"],
            spec=JobSpec.model_validate_json(row["spec"]),
            state=JobState(row["state"]),
            priority=row["priority"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            state_reason=row["state_reason"],
            retries_used=row["retries_used"],
            infra_retries_used=row["infra_retries_used"],
            checkpoint_dir=row["checkpoint_dir"],
            not_before=row["not_before"],
            attempts=attempts.get(row["id"], []),
            **waiting_fields(waits.get(row["id"]) if row["state"] == JobState.pending.value else None),
        )
        for row in rows
    }
    return [by_id[job_id] for job_id in job_ids if job_id in by_id]


def waiting_fields(row: sqlite3.Row | None) -> dict[str, Any]:
    """A pending job's `waiting_kind`, `waiting_reason`, `queue_position`, `estimated_start`."""
    if row is None:
        return {}
    return {"waiting_kind": row["kind"], "waiting_reason": row["reason"], "queue_position": row["queue_position"],
            "estimated_start": row["estimated_start"]}


def attempt_from_row(row: sqlite3.Row) -> Attempt:
    return Attempt(
        job_id=row["job_id"],
        number=row["number"],
        node=row["node"],
        gpus=json.loads(row["gpus"]),
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        outcome=AttemptOutcome(row["outcome"]) if row["outcome"] else None,
        exit_code=row["exit_code"],
        failure_class=FailureClass(row["failure_class"]) if row["failure_class"] else None,
        log_excerpt=row["log_excerpt"],
        log_path=row["log_path"],
        pid=row["pid"],
        stop_reason=row["stop_reason"],
        members=[AttemptMember(rank=r, **m) for r, m in enumerate(json.loads(row["members"]))],
    )


def node_from_row(row: sqlite3.Row) -> Node:
    return Node(
        name=row["name"],
        gpus=json.loads(row["gpus"]),
        state=row["state"],
        health=row["health"],
        reason=row["reason"],
        virtual=bool(row["virtual"]),
        last_probe_at=row["last_probe_at"],
        address=row["address"],
    )
