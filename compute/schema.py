"""The compute store's SQLite schema (compute/store.py), and the columns its readers select."""

import re

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    spec TEXT NOT NULL,
    state TEXT NOT NULL,
    priority INTEGER NOT NULL,
    gpus INTEGER NOT NULL,
    preemptible INTEGER NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    queued_at REAL NOT NULL,
    state_reason TEXT NOT NULL DEFAULT '',
    retries_used INTEGER NOT NULL DEFAULT 0,
    infra_retries_used INTEGER NOT NULL DEFAULT 0,
    checkpoint_dir TEXT NOT NULL,
    not_before REAL NOT NULL DEFAULT 0,
    idempotency_key TEXT UNIQUE,
    cancel_requested TEXT,
    excluded_nodes TEXT NOT NULL DEFAULT '[]',
    not_before_boot REAL
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state);
CREATE TABLE IF NOT EXISTS job_labels (
    job_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (job_id, key)
);
CREATE INDEX IF NOT EXISTS job_labels_kv ON job_labels(key, value);
CREATE TABLE IF NOT EXISTS attempts (
    job_id TEXT NOT NULL,
    number INTEGER NOT NULL,
    node TEXT NOT NULL,
    gpus TEXT NOT NULL,
    started_at REAL NOT NULL,
    ended_at REAL,
    outcome TEXT,
    exit_code INTEGER,
    failure_class TEXT,
    failure_rule TEXT,
    log_excerpt TEXT,
    log_path TEXT NOT NULL,
    pid INTEGER,
    handle TEXT,
    stop_reason TEXT,
    kill_at REAL,
    killed INTEGER NOT NULL DEFAULT 0,
    members TEXT NOT NULL DEFAULT '[]',
    started_boot REAL,
    kill_at_boot REAL,
    PRIMARY KEY (job_id, number)
);
CREATE INDEX IF NOT EXISTS attempts_live ON attempts(outcome) WHERE outcome IS NULL;
CREATE TABLE IF NOT EXISTS nodes (
    name TEXT PRIMARY KEY,
    gpus TEXT NOT NULL,
    state TEXT NOT NULL,
    health TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    virtual INTEGER NOT NULL DEFAULT 0,
    last_probe_at REAL,
    address TEXT NOT NULL DEFAULT '',
    cpus REAL
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    kind TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    job_id TEXT,
    attempt INTEGER,
    node TEXT,
    data TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS events_job ON events(job_id, id);
CREATE TABLE IF NOT EXISTS job_waiting (
    job_id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    reason TEXT NOT NULL,
    queue_position INTEGER NOT NULL,
    estimated_start REAL
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    request TEXT NOT NULL,
    reply TEXT,
    created_at REAL NOT NULL,
    replied_at REAL
);
CREATE TABLE IF NOT EXISTS projects (
    name TEXT PRIMARY KEY,
    quota_gpus INTEGER NOT NULL,
    weight REAL NOT NULL DEFAULT 1.0,
    max_priority INTEGER NOT NULL DEFAULT 100,
    borrow INTEGER NOT NULL DEFAULT 1,
    lend INTEGER NOT NULL DEFAULT 1,
    usage_gpu_s REAL NOT NULL DEFAULT 0,
    usage_at REAL NOT NULL DEFAULT 0,
    quota_cpus REAL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
"""
TABLES = tuple(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", SCHEMA))
"""Every table of the schema: a store that has them all needs no upgrade (compute/store.py, compute/reads.py)."""


JOB_COLUMNS = (
    "id, spec, state, priority, created_at, updated_at, state_reason, retries_used, "
    "infra_retries_used, checkpoint_dir, not_before"
)
ATTEMPT_COLUMNS = (
    "job_id, number, node, gpus, started_at, ended_at, outcome, exit_code, failure_class, failure_rule, "
    "log_excerpt, log_path, pid, stop_reason, members"
)
MIGRATIONS = {
    ("attempts", "members"): "ALTER TABLE attempts ADD COLUMN members TEXT NOT NULL DEFAULT '[]'",
    ("attempts", "started_boot"): "ALTER TABLE attempts ADD COLUMN started_boot REAL",
    ("attempts", "kill_at_boot"): "ALTER TABLE attempts ADD COLUMN kill_at_boot REAL",
    ("jobs", "not_before_boot"): "ALTER TABLE jobs ADD COLUMN not_before_boot REAL",
    ("attempts", "failure_rule"): "ALTER TABLE attempts ADD COLUMN failure_rule TEXT",
    ("nodes", "cpus"): "ALTER TABLE nodes ADD COLUMN cpus REAL",
    ("projects", "quota_cpus"): "ALTER TABLE projects ADD COLUMN quota_cpus REAL",
}
"""Columns added after a store's tables were made: (table, column) -> the statement that adds it.
The `*_boot` columns: CLOCK_BOOTTIME readings of the wall-clock instant beside them (compute/clock.py)."""
