"""Submitting through the daemon: a request row answered by the daemon, for clients that must
not import pydantic.

The client writes `{"fields": <JobSpec fields as given>, "submitter": <Submitter>, "dry_run": bool}`
into table `submissions` and wakes the daemon. At the start of its next tick the daemon
(compute/submission_answers.py) validates the fields as `JobSpec`, resolves the spec with the submitter's environment
(compute/submitter.py) and inserts the job, in the same transaction as its reply:
`{"job_id": ID}`, `{"spec": <resolved spec JSON>}` for a dry run, `{"error": MESSAGE, "code": 2}`
for a spec it refuses (the message `Client.submit` and the CLI give), or `{"fallback": WHY}` when
it failed for another reason (the client then submits in-process). A client that gives up
(the daemon stopped, or it is too slow) withdraws its row first; withdrawal and answer exclude
each other, so a request is answered at most once and a withdrawn one never becomes a job.

This module is the client's side (no pydantic); the daemon's is compute/submission_answers.py.
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from compute.control import TAKES_SUBMISSIONS, daemon_info, notify
from compute.paths import ComputePaths
from compute.submitter import Submitter

_GIVE_UP_S = 10.0
"""A client waits this long for an answer before withdrawing and submitting itself."""
_CHECK_DAEMON_S = 0.5


def daemon_takes_submissions(paths: ComputePaths) -> bool:
    """Whether a daemon runs for this home and answers submission requests."""
    info = daemon_info(paths)
    return info is not None and info.get(TAKES_SUBMISSIONS) is True


def request(paths: ComputePaths, conn: sqlite3.Connection, fields: dict[str, Any], submitter: Submitter,
            dry_run: bool = False, give_up_s: float = _GIVE_UP_S) -> dict[str, Any] | None:
    """Ask the daemon to submit (or with `dry_run`, to validate and resolve) a job; its reply, or
    None when it did not answer (stopped, or slower than `give_up_s`) and the request was withdrawn."""
    text = json.dumps({"fields": fields, "submitter": submitter.as_dict(), "dry_run": dry_run})
    cursor = conn.execute("INSERT INTO submissions (request, created_at) VALUES (?, ?)", (text, time.time()))
    row_id = cursor.lastrowid
    notify(paths)
    start = checked = time.monotonic()
    pause = 0.001
    while True:
        row = conn.execute("SELECT reply FROM submissions WHERE id = ?", (row_id,)).fetchone()
        if row is not None and row[0] is not None:
            conn.execute("DELETE FROM submissions WHERE id = ?", (row_id,))
            reply: dict[str, Any] = json.loads(row[0])
            return reply
        now = time.monotonic()
        if now - start > give_up_s or (now - checked > _CHECK_DAEMON_S and not daemon_takes_submissions(paths)):
            if conn.execute("DELETE FROM submissions WHERE id = ? AND reply IS NULL", (row_id,)).rowcount == 1:
                return None
            continue  # answered meanwhile: read it
        if now - checked > _CHECK_DAEMON_S:
            checked = now
        time.sleep(pause)
        pause = min(pause * 1.5, 0.005)
