"""The daemon's side of submitting through the daemon (the protocol: compute/submissions.py):
validate, resolve and queue each waiting request, and write its reply."""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import ValidationError

from compute.errors import ComputeError, validation_message
from compute.spec import JobSpec
from compute.store import Store
from compute.submitter import Submitter, resolve_spec

_KEEP_S = 3600.0
"""Answered rows a client never read back (it died) are deleted after this long."""


def answer(store: Store) -> int:
    """Answer every waiting submission request (the daemon, at the start of each tick); how many."""
    rows = store.read("SELECT id, request FROM submissions WHERE reply IS NULL ORDER BY id")
    for row in rows:
        req = json.loads(row["request"])
        spec: JobSpec | None = None
        try:
            spec, reply = _check(store, req)
        except Exception as err:  # a bug here must not lose the request: the client submits itself
            reply = {"fallback": f"{type(err).__name__}: {err}"}
        with store.transaction() as conn:
            if conn.execute("SELECT 1 FROM submissions WHERE id = ? AND reply IS NULL", (row["id"],)).fetchone() is None:
                continue  # withdrawn by its client
            if spec is not None and not req.get("dry_run"):
                try:  # the project checks read the store (compute/project_checks.py), before any insert
                    reply = {"job_id": store.add_job(conn, spec)}
                except ComputeError as err:
                    reply = {"error": str(err), "code": 2}
            conn.execute("UPDATE submissions SET reply = ?, replied_at = ? WHERE id = ?",
                         (json.dumps(reply), time.time(), row["id"]))
    if rows:
        with store.transaction() as conn:
            conn.execute("DELETE FROM submissions WHERE replied_at < ?", (time.time() - _KEEP_S,))
    return len(rows)


def _check(store: Store, req: dict[str, Any]) -> tuple[JobSpec | None, dict[str, Any]]:
    """(the resolved spec, the dry run's reply) or (None, the error reply), as `Client.submit` decides."""
    try:
        spec = JobSpec.model_validate(req["fields"])
    except ValidationError as err:
        return None, {"error": validation_message("job", err), "code": 2}
    try:
        spec = resolve_spec(spec, Submitter(**req["submitter"]), store.nodes(), store.paths.home)
    except ComputeError as err:
        return None, {"error": str(err), "code": 2}
    return spec, {"spec": spec.model_dump(mode="json")}
