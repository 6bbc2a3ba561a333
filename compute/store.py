"""The durable compute store: jobs, attempts, nodes and events in one SQLite file (WAL).

The store is the truth. Clients (the Python `Client`, the CLI, MCP) write requests into
it (submit, cancel, set_priority) and read state from it; the daemon reads requests and
writes what it did. Each state change is one `BEGIN IMMEDIATE` transaction that also
appends one row to `events` with its reason, so the event log and the state never
disagree. Several processes may open the same store at once; SQLite's lock serialises
writers and WAL lets readers run beside them.
"""

from __future__ import annotations

import json
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compute.errors import ComputeError, JobNotFound, StoreLost, store_unavailable
from compute.paths import ComputePaths
from compute.records import Event, Job, JobState, Node
from compute.rows import load_jobs, node_from_row
from compute.reads import list_job_ids, pending_reasons
from compute.schema import MIGRATIONS, SCHEMA, TABLES
from compute.project_checks import check_job_project, check_priority
from compute.priority import parse_priority
from compute.spec import DEFAULT_PROJECT, JobSpec

def _identity(path: Path) -> tuple[int, int, int] | None:
    """(device, inode, size) of `path`, or None when it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size


def new_job_id() -> str:
    """`job-` and 10 hex characters."""
    return "job-" + secrets.token_hex(5)


class Store:
    """One connection to the compute store. Thread-safe (one lock per instance)."""

    def __init__(self, paths: ComputePaths) -> None:
        self.paths = paths
        paths.ensure()
        self._lock = threading.RLock()
        if paths.db_marker.is_file() and (_identity(paths.db) or (0, 0, 0))[2] == 0:
            raise self._lost()  # said at once: opening an emptied file beside a live -wal waits out other holders' locks
        self._conn = sqlite3.connect(
            paths.db, timeout=30.0, isolation_level=None, check_same_thread=False
        )
        self._conn.row_factory = sqlite3.Row
        try:
            self._open_schema()
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            if (unavailable := store_unavailable(exc, paths.db)) is not None:
                raise unavailable from exc
            raise StoreLost(
                f"the compute store {paths.db} is not a usable SQLite database ({exc}). Stop the daemon "
                f"(`autoresearch compute down`), restore {paths.db.name} from a backup or move it away to start "
                "with an empty store (jobs and their history are then forgotten)."
            ) from None
        self._identity = _identity(paths.db)

    def _open_schema(self) -> None:
        self._conn.execute("PRAGMA busy_timeout=30000")
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        # Every table present: a reader then takes no write lock (a CLI call must not queue
        # behind the daemon's transactions).
        present = {row[0] for row in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if present.issuperset(TABLES):
            if not self.paths.db_marker.is_file():  # a store made before the marker existed
                self._mark()
            self._migrate()
            return
        if "jobs" in present:  # an older store: it gains the tables added since (all are IF NOT EXISTS)
            self._create_tables("schema_migrated", f"added the tables {', '.join(t for t in TABLES if t not in present)}")
            if not self.paths.db_marker.is_file():
                self._mark()
            self._migrate()
            return
        if self.paths.db_marker.is_file():
            raise self._lost()
        self._create_tables()
        self._mark()

    def _lost(self) -> StoreLost:
        return StoreLost(
            f"the compute store {self.paths.db} lost its tables (it was truncated, deleted or replaced) "
            f"but this home had one ({self.paths.db_marker}); it is not recreated empty, which would forget "
            f"every job. Stop the daemon (`autoresearch compute down`), restore {self.paths.db.name} from a "
            f"backup, or delete {self.paths.db_marker.name} to start with an empty store."
        )

    def _create_tables(self, kind: str = "", reason: str = "") -> None:
        """Every table and index that is missing (all statements are IF NOT EXISTS), with an event if `kind`."""
        with self.transaction() as conn:
            for statement in SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            if kind:
                self.event(conn, kind, reason)

    def _migrate(self) -> None:
        """Add the columns a store made by an older version lacks (a read first: usually nothing to do)."""
        for (table, column), statement in MIGRATIONS.items():
            if column not in {r[1] for r in self._conn.execute(f"PRAGMA table_info({table})")}:
                with self.transaction() as conn:
                    if column not in {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}:
                        conn.execute(statement)

    def _mark(self) -> None:
        try:
            self.paths.db_marker.touch()
        except OSError:
            pass  # a read-only home: nothing to protect against from here

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def check_intact(self) -> None:
        """Raise `StoreLost` when store.db was deleted, truncated or replaced under this open store
        (a long-lived holder, the daemon, checks it each tick: a stat, no read)."""
        now = _identity(self.paths.db)
        if now is None or now[2] == 0 or now[:2] != (self._identity or now)[:2]:
            raise StoreLost(
                f"the compute store {self.paths.db} was deleted, truncated or replaced while the daemon had it "
                "open; the daemon stops so it holds no lock on it (running attempts keep running). Restore "
                f"{self.paths.db.name} from a backup, or move it away and delete {self.paths.db_marker.name} to "
                "start with an empty store, then start the daemon again (`autoresearch compute up`)."
            )

    # -- plumbing shared with the daemon ---------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE): all of it commits, or none. A full disk, a lock
        held too long or an I/O error raises `StoreUnavailable` (compute/errors.py)."""
        with self._lock, self._unavailable():
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:  # SQLite may have rolled back already (a full disk)
                    self._conn.execute("ROLLBACK")
                raise

    @contextmanager
    def _unavailable(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.OperationalError as exc:
            if (unavailable := store_unavailable(exc, self.paths.db)) is not None:
                raise unavailable from exc
            raise

    def changes(self) -> int:
        """Rows this connection has changed since it opened (grows with each of its writes)."""
        with self._lock:
            return self._conn.total_changes

    def wal_bytes(self) -> int:
        """The size of the store's write-ahead log (0 when there is none)."""
        try:
            return os.path.getsize(f"{self.paths.db}-wal")
        except OSError:
            return 0

    def truncate_wal(self) -> bool:
        """Checkpoint the write-ahead log into the database and truncate it to zero bytes, without
        waiting for others: False when a reader or writer is in the way (try again later). SQLite
        reuses a WAL but never shrinks it while a connection (the daemon's) stays open."""
        with self._lock:
            self._conn.execute("PRAGMA busy_timeout=0")
            try:
                busy = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            except sqlite3.OperationalError:
                return False
            finally:
                self._conn.execute("PRAGMA busy_timeout=30000")
            return bool(busy == 0)

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock, self._unavailable():
            return self._conn.execute(sql, params).fetchall()

    @staticmethod
    def event(
        conn: sqlite3.Connection,
        kind: str,
        reason: str = "",
        *,
        job_id: str | None = None,
        attempt: int | None = None,
        node: str | None = None,
        data: dict[str, Any] | None = None,
        now: float | None = None,
    ) -> None:
        """Append one event row (call inside the transaction that made the change)."""
        conn.execute(
            "INSERT INTO events (ts, kind, reason, job_id, attempt, node, data) VALUES (?,?,?,?,?,?,?)",
            (now or time.time(), kind, reason, job_id, attempt, node, json.dumps(data or {})),
        )

    def data_version(self) -> int:
        """Changes whenever another connection commits: a cheap 'anything new?' probe."""
        with self._lock:
            return int(self._conn.execute("PRAGMA data_version").fetchone()[0])

    # -- client requests --------------------------------------------------------------

    def submit(self, spec: JobSpec) -> Job:
        """Insert a pending job; with a known idempotency_key, return that job instead."""
        return self.get_job(self.insert_job(spec))

    def insert_job(self, spec: JobSpec) -> str:
        """`submit` without reading the job back: the id of the new (or keyed) job."""
        with self.transaction() as conn:
            return self.add_job(conn, spec)

    def add_job(self, conn: sqlite3.Connection, spec: JobSpec) -> str:
        """Insert a pending job inside the caller's transaction (with a known idempotency_key:
        that job's id instead)."""
        now = time.time()
        if spec.idempotency_key is not None:
            row = conn.execute("SELECT id FROM jobs WHERE idempotency_key = ?", (spec.idempotency_key,)).fetchone()
            if row is not None:
                return str(row["id"])
        check_job_project(conn, spec, str(self.paths.home))
        job_id = new_job_id()
        conn.execute(
            "INSERT INTO jobs (id, spec, state, priority, gpus, preemptible, created_at, updated_at,"
            " queued_at, state_reason, checkpoint_dir, idempotency_key, excluded_nodes)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                job_id,
                spec.model_dump_json(),
                JobState.pending.value,
                spec.priority,
                spec.resources.gpus,
                int(spec.preemptible),
                now,
                now,
                now,
                "submitted",
                spec.checkpoint_dir or str(self.paths.checkpoint_dir(job_id)),
                spec.idempotency_key,
                json.dumps(sorted(set(spec.avoid_nodes))),
            ),
        )
        conn.executemany(
            "INSERT INTO job_labels (job_id, key, value) VALUES (?,?,?)",
            [(job_id, k, v) for k, v in spec.labels.items()],
        )
        self.event(conn, "submitted", f"submitted {spec.name!r}", job_id=job_id, now=now,
                   data={"priority": spec.priority, "gpus": spec.resources.gpus, "project": spec.project})
        return job_id

    def request_cancel(self, job_id: str, reason: str = "") -> Job:
        """Pending -> cancelled at once; running -> flagged for the daemon to stop.

        A job already final is returned unchanged.
        """
        reason = reason or "cancelled by request"
        now = time.time()
        with self.transaction() as conn:
            state, requested = self._state_of(conn, job_id)
            if state == JobState.pending:
                conn.execute(
                    "UPDATE jobs SET state=?, state_reason=?, updated_at=? WHERE id=?",
                    (JobState.cancelled.value, reason, now, job_id),
                )
                self.event(conn, "cancelled", reason, job_id=job_id, now=now)
            elif state == JobState.running and requested is None:
                conn.execute(
                    "UPDATE jobs SET cancel_requested=?, updated_at=? WHERE id=?", (reason, now, job_id)
                )
                self.event(conn, "cancel_requested", reason, job_id=job_id, now=now)
            return load_jobs(conn, [job_id])[0]

    def set_priority(self, job_id: str, priority: int | str) -> Job:
        """Change a job's priority (0-100 or a name); final jobs cannot change."""
        try:
            value = parse_priority(priority)
        except ValueError as err:
            raise ComputeError(f"set_priority({job_id!r}): {err}") from None
        now = time.time()
        with self.transaction() as conn:
            state, _ = self._state_of(conn, job_id)
            if state.final:
                raise ComputeError(
                    f"job {job_id} is already {state.value}: its priority can no longer change"
                )
            old, project = conn.execute(
                "SELECT priority, COALESCE(json_extract(spec, '$.project'), ?) FROM jobs WHERE id=?",
                (DEFAULT_PROJECT, job_id)).fetchone()
            limit = conn.execute("SELECT max_priority FROM projects WHERE name=?", (project,)).fetchone()
            if limit is not None:
                check_priority(job_id, project, value, limit[0])
            conn.execute("UPDATE jobs SET priority=?, updated_at=? WHERE id=?", (value, now, job_id))
            self.event(conn, "priority_changed", f"priority {old} -> {value}", job_id=job_id, now=now,
                       data={"old": old, "new": value})
            return load_jobs(conn, [job_id])[0]

    # -- reads ------------------------------------------------------------------------

    def get_job(self, job_id: str) -> Job:
        with self._lock:
            jobs = load_jobs(self._conn, [job_id])
        if not jobs:
            raise JobNotFound(job_id, str(self.paths.home))
        return jobs[0]

    def get_jobs(self, job_ids: Sequence[str]) -> list[Job]:
        """Jobs in the order asked; raises JobNotFound for the first unknown id."""
        with self._lock:
            found = {job.id: job for job in load_jobs(self._conn, list(job_ids))}
        for job_id in job_ids:
            if job_id not in found:
                raise JobNotFound(job_id, str(self.paths.home))
        return [found[job_id] for job_id in job_ids]

    def job_states(self, job_ids: Sequence[str]) -> dict[str, JobState]:
        marks = ",".join("?" * len(job_ids))
        rows = self.read(f"SELECT id, state FROM jobs WHERE id IN ({marks})", list(job_ids))
        return {row["id"]: JobState(row["state"]) for row in rows}

    def list_jobs(
        self,
        states: Iterable[JobState | str] | None = None,
        labels: dict[str, str] | None = None,
        min_priority: int | None = None,
        max_priority: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[Job]:
        """Newest first, filtered by state, labels (all must match) and priority range."""
        values = None if states is None else [JobState(s).value for s in states]
        with self._lock:
            ids = list_job_ids(self._conn, values, labels, min_priority, max_priority, limit, offset)
            return load_jobs(self._conn, ids)

    def pending_reasons(self, job_ids: list[str]) -> dict[str, str]:
        """Those of `job_ids` still pending -> why each waits (compute/reads.py `pending_reasons`)."""
        with self._lock:
            return pending_reasons(self._conn, job_ids)

    def queue(self, limit: int = 100, offset: int = 0) -> list[Job]:
        """Pending jobs in scheduling order: by the daemon's last pass (`queue_position`), then the
        jobs in retry backoff, then those no pass has seen yet (priority, then FIFO)."""
        with self._lock:
            placed = self._conn.execute(  # the narrow table first: a page of a 10k queue costs one small sort
                "SELECT job_id FROM job_waiting WHERE queue_position > 0 ORDER BY queue_position LIMIT ? OFFSET ?",
                [limit, offset]).fetchall()  # fmt: skip
            ids = [row["job_id"] for row in placed]
            if len(ids) < limit:
                before = self._conn.execute("SELECT COUNT(*) FROM job_waiting WHERE queue_position > 0").fetchone()[0]
                rest = self._conn.execute(
                    "SELECT j.id FROM jobs j LEFT JOIN job_waiting w ON w.job_id = j.id WHERE j.state = 'pending' "
                    "AND (w.queue_position IS NULL OR w.queue_position = 0) "
                    "ORDER BY w.queue_position IS NULL, j.priority DESC, j.seq LIMIT ? OFFSET ?",
                    [limit - len(ids), max(0, offset - before)],
                ).fetchall()
                ids += [row["id"] for row in rest]
            # a row of a job that started since the last pass stays until the next one: not shown
            return [job for job in load_jobs(self._conn, ids) if job.state is JobState.pending]

    def count_by_state(self) -> dict[str, int]:
        rows = self.read("SELECT state, COUNT(*) AS n FROM jobs GROUP BY state")
        return {row["state"]: row["n"] for row in rows}

    def nodes(self) -> list[Node]:
        return [node_from_row(row) for row in self.read("SELECT * FROM nodes ORDER BY name")]

    def events(
        self, job_id: str | None = None, node: str | None = None, since_id: int = 0, limit: int = 1000,
        kind: str | None = None, newest: bool = False,
    ) -> list[Event]:
        """Events after `since_id` (of a job, a node, a kind), oldest first; `newest`: the last `limit`."""
        where: list[str] = ["id > ?"]
        params: list[object] = [since_id]
        if job_id is not None:
            where.append("job_id = ?")
            params.append(job_id)
        if node is not None:
            where.append("node = ?")
            params.append(node)
        if kind is not None:
            where.append("kind = ?")
            params.append(kind)
        order = "DESC" if newest else ""
        rows = self.read(
            f"SELECT * FROM events WHERE {' AND '.join(where)} ORDER BY id {order} LIMIT ?", [*params, limit]
        )
        if newest:
            rows.reverse()
        return [
            Event(
                id=row["id"], ts=row["ts"], kind=row["kind"], reason=row["reason"], job_id=row["job_id"],
                attempt=row["attempt"], node=row["node"], data=json.loads(row["data"]),
            )
            for row in rows
        ]

    # -- helpers ----------------------------------------------------------------------

    def _state_of(self, conn: sqlite3.Connection, job_id: str) -> tuple[JobState, str | None]:
        row = conn.execute("SELECT state, cancel_requested FROM jobs WHERE id=?", (job_id,)).fetchone()
        if row is None:
            raise JobNotFound(job_id, str(self.paths.home))
        return JobState(row["state"]), row["cancel_requested"]
