"""Records from the compute store's rows: jobs with their attempts and waiting reasons, and nodes.

Jobs are built from `compute.reads.job_views`, the one row -> dict mapping that the CLI's fast
path prints as JSON, so a `Job`'s `model_dump(mode="json")` and that JSON agree; nodes from
`node_view` likewise."""

from __future__ import annotations

import sqlite3

from compute.reads import job_views, node_view
from compute.records import Job, Node
from compute.spec import JobSpec


def load_jobs(conn: sqlite3.Connection, job_ids: list[str]) -> list[Job]:
    """Jobs (with their attempts) in the order of `job_ids`; unknown ids are skipped."""
    return [Job.model_validate(view) for view in job_views(conn, job_ids, spec=JobSpec.model_validate_json)]


def node_from_row(row: sqlite3.Row) -> Node:
    return Node.model_validate(node_view(row))
