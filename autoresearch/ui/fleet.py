"""What the Fleet, Queue and Jobs pages show, read through `compute.Client` (as the CLI reads it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any


from compute import Client, ComputeError, Event, Job, JobState
from compute.attempt_logs import read_chunks, read_tail, readable_size, text_of

if TYPE_CHECKING:  # compute.nodes imports the health package: on the first Fleet request, not at start-up
    from compute import NodeStatus
from autoresearch.ui.paging import Page, fetch_page

PROBES_SHOWN = 8
"""Probe results shown per node (the newest)."""
RUNNING_SHOWN = 200
LOG_TAIL_BYTES = 64 * 1024
_KNOWN_JOB_FIELDS = {
    "id",
    "spec",
    "state",
    "priority",
    "created_at",
    "updated_at",
    "state_reason",
    "retries_used",
    "infra_retries_used",
    "checkpoint_dir",
    "not_before",
    "attempts",
    "waiting_kind",
    "waiting_reason",
    "queue_position",
    "estimated_start",
}
"""The job fields the job page lays out; any other field a newer store adds is listed as is."""


@dataclass(frozen=True)
class FleetView:
    nodes: list[NodeStatus]
    probes: dict[str, list[Event]]
    """Node -> its newest probe events, oldest first."""
    running: list[Job]
    counts: dict[str, int]
    projects: list[dict[str, Any]] | None = None
    """One row per project, when the compute store has projects (None: this store has none)."""


@dataclass(frozen=True)
class JobFilter:
    states: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)
    min_priority: int | None = None


def parse_filter(states: list[str], label: str | None, min_priority: str | None) -> JobFilter:
    """The filter of the Jobs page's query; raises ValueError naming the bad value and what is allowed."""
    allowed = [s.value for s in JobState]
    for s in states:
        if s not in allowed:
            raise ValueError(f"state={s!r} is not a job state; use one of {', '.join(allowed)}")
    labels: dict[str, str] = {}
    if label:
        key, sep, value = label.partition("=")
        if not sep or not key:
            raise ValueError(f"label={label!r}: write key=value, e.g. campaign=digits-mlp")
        labels[key] = value
    try:
        floor = int(min_priority) if min_priority else None
    except ValueError:
        raise ValueError(f"min_priority={min_priority!r} is not a number 0-100") from None
    return JobFilter(states=states, labels=labels, min_priority=floor)


def fleet(client: Client) -> FleetView:
    nodes = client.node_status()
    probes = {n.name: client.events(node=n.name, kind="probe", limit=PROBES_SHOWN, newest=True) for n in nodes}
    running = client.list(states=[JobState.running], limit=RUNNING_SHOWN)
    return FleetView(
        nodes=nodes, probes=probes, running=running, counts=client.count_by_state(), projects=projects(client)
    )


def projects(client: Client) -> list[dict[str, Any]] | None:
    """The compute store's projects with quota, in use, borrowed, lent, pending (None: it has none)."""
    rows = client.projects()
    return [p.model_dump(mode="json") for p in rows] if any(p.configured for p in rows) else None


def queue(client: Client, number: int, per_page: int) -> Page[Job]:
    total = client.count_by_state().get(JobState.pending.value, 0)
    return fetch_page(client.queue, number, per_page, total)


def jobs(client: Client, wanted: JobFilter, number: int, per_page: int) -> Page[Job]:
    total: int | None = None
    if not wanted.labels and wanted.min_priority is None:
        counts = client.count_by_state()
        total = sum(n for s, n in counts.items() if not wanted.states or s in wanted.states)

    def fetch(limit: int, offset: int) -> list[Job]:
        return client.list(
            states=wanted.states or None,
            labels=wanted.labels or None,
            min_priority=wanted.min_priority,
            limit=limit,
            offset=offset,
        )

    return fetch_page(fetch, number, per_page, total)


@dataclass(frozen=True)
class JobView:
    job: Job
    events: list[Event]
    extra: dict[str, Any]
    """Fields of the job record this page does not lay out (e.g. gang members), as JSON."""
    spec: dict[str, Any]
    """The spec as JSON, its env by names only (values may be secret; the page may be seen by others)."""
    log_path: Path | None


def job(client: Client, job_id: str) -> JobView:
    """Raises JobNotFound (a ComputeError) for an unknown id."""
    found = client.get(job_id)
    dumped = found.model_dump(mode="json")
    extra = {k: v for k, v in dumped.items() if k not in _KNOWN_JOB_FIELDS and v not in (None, [], {})}
    spec = dumped["spec"] | {"env": sorted(found.spec.env)}
    return JobView(
        job=found,
        events=client.events(job_id=job_id, limit=200, newest=True),
        extra=extra,
        spec=spec,
        log_path=log_path(client, found),
    )


def log_path(client: Client, found: Job) -> Path | None:
    if not found.attempts:
        return None
    try:
        return client.log_path(found.id)
    except ComputeError:
        return None


def read_from(path: Path, offset: int, max_bytes: int = LOG_TAIL_BYTES) -> tuple[str, int, bool]:
    """What was appended to the log after `offset` (at most `max_bytes`), the new offset, and whether
    it starts over: `offset` is -1 (a new attempt's log), the log shrank below it (replaced), or it
    lags more than `max_bytes` behind the end (a page opened on an old offset, or far behind): then
    the log's tail is sent, never the whole file."""
    try:
        size = readable_size(path, path.stat().st_size)
        if not 0 <= offset <= size or size - offset > max_bytes:
            tail = read_tail(path, max_bytes=max_bytes)
            return tail.text, tail.size, True
        for end, data in read_chunks(path, offset, size, chunk=max_bytes):
            return text_of(data), end, False
    except OSError:
        pass
    return "", offset, False
