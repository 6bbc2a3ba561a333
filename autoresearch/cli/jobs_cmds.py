"""`autoresearch jobs list | status | logs | cancel | priority | wait` (`jobs submit`: jobs_submit.py).

The reads (`list`, `status`, `logs`) work on a job's JSON view: straight from the store with sqlite3
(`compute.reads`, the same row -> dict mapping the typed records are built from), or, when the store
is missing or needs upgrading, the `Job`'s `model_dump(mode="json")` through `compute.Client`. So an
agent polling `jobs status ID --json` pays for neither pydantic nor rich."""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

import click

from autoresearch.cli._common import console, err_console, fail, json_option, print_json
from autoresearch.cli._logs import check_attempt, not_started, print_file, reason, write_log_json
from autoresearch.cli._plain import BadInput, check_states, parse_labels
from compute.errors import JobNotFound
from compute.paths import ComputePaths
from compute.priority import priority_name
from compute.reads import job_views, list_job_ids, open_store
from compute.states import JobState

if TYPE_CHECKING:
    from compute import Client

cli = click.Group()


def _client(autostart: bool = True) -> Client:
    from compute import Client

    return Client(autostart=autostart)


@contextmanager
def _reading() -> Iterator[sqlite3.Connection | None]:
    """The store opened for reading (None: not there, or not at the current schema: `Client` then);
    `main` turns a locked or lost store's sqlite3 error into its message, as `Client` does."""
    conn = open_store(ComputePaths.of())
    try:
        yield conn
    finally:
        if conn is not None:
            conn.close()


def _views(job_ids: list[str]) -> list[dict[str, Any]]:
    """The JSON views of these jobs (an unknown id: exit 2 naming it)."""
    with _reading() as conn:
        if conn is not None:
            views = job_views(conn, job_ids)
            if len(views) == len(job_ids):
                return views
            fail(str(JobNotFound(next(i for i in job_ids if i not in {v["id"] for v in views}), str(ComputePaths.of().home))))
    from compute import ComputeError

    try:
        with _client(autostart=False) as client:
            return [client.get(job_id).model_dump(mode="json") for job_id in job_ids]
    except ComputeError as err:
        fail(str(err))


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%H:%M:%S") if ts else "-"


@cli.command("list")
@click.option("--state", multiple=True, help="Only these states (repeatable).")
@click.option("--label", multiple=True, help="key=value; all must match (repeatable).")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@json_option
def list_jobs(state: tuple[str, ...], label: tuple[str, ...], limit: int, as_json: bool) -> None:
    """Jobs, newest first."""
    try:
        check_states(list(state))
        labels = parse_labels(list(label))
    except BadInput as err:
        fail(str(err))
    with _reading() as conn:
        if conn is not None:
            jobs = job_views(conn, list_job_ids(conn, list(state) or None, labels or None, limit=limit))
        else:
            with _client(autostart=False) as client:
                jobs = [j.model_dump(mode="json") for j in client.list(states=list(state) or None,
                                                                      labels=labels or None, limit=limit)]
    if as_json:
        print_json(jobs)
        return
    from rich.table import Column, Table

    table = Table(Column("id", no_wrap=True, min_width=max((len(j["id"]) for j in jobs), default=2)),
                  *(Column(c, overflow="fold") for c in ("name", "state", "priority", "gpus", "attempts", "updated",
                                                          "reason")))
    for j in jobs:
        table.add_row(j["id"], j["spec"]["name"], j["state"], priority_name(j["priority"]),
                      str(j["spec"]["resources"]["gpus"]), str(len(j["attempts"])), _when(j["updated_at"]), reason(j))
    console.print(table)


@cli.command("status")
@click.argument("job_id")
@json_option
def status(job_id: str, as_json: bool) -> None:
    """One job: state, priority, retries and its attempts; a daemon that stopped ticking is named."""
    job = _views([job_id])[0]
    if as_json:
        print_json(job)
        return
    from compute.control import daemon_info, not_responding

    silent = None if JobState(job["state"]).final else not_responding(
        daemon_info(ComputePaths.of()))
    lines = [f"{job['id']} {job['spec']['name']!r}: {job['state']} ({job['state_reason']})",
             f"priority {job['priority']} ({priority_name(job['priority'])}), retries {job['retries_used']}/"
             f"{job['spec']['max_retries']}",
             f"checkpoint dir: {job['checkpoint_dir']}"]
    if job["state"] == "pending" and job["waiting_reason"]:
        start = _when(job["estimated_start"]) if job["estimated_start"] else "unknown"
        lines.append(f"waiting: {job['waiting_reason']}; queue position {job['queue_position']}, estimated start {start}")
    lines += [f"attempt {a['number']} log: {a['log_path']}" for a in job["attempts"]]
    if silent is not None:
        lines.append(silent)
    sys.stdout.write("\n".join(lines) + "\n")  # plain lines: ids and paths are never cut at any width
    if job["attempts"]:
        from rich.table import Column, Table

        table = Table(*(Column(c, overflow="fold") for c in ("attempt", "node", "gpus", "started", "ended", "outcome",
                                                              "exit")))
        for a in job["attempts"]:
            table.add_row(str(a["number"]), a["node"], ",".join(map(str, a["gpus"])) or "-", _when(a["started_at"]),
                          _when(a["ended_at"]), a["outcome"] or "running",
                          "" if a["exit_code"] is None else str(a["exit_code"]))
        console.print(table)


@cli.command("logs")
@click.argument("job_id")
@click.option("--follow", "-f", is_flag=True, help="Keep printing until the job ends.")
@click.option("--attempt", type=int, help="Attempt number (default: the latest).")
@click.option("--tail", type=click.IntRange(min=0), help="Only the last N lines.")
@click.option("--rank", type=int, default=0, help="Gang member (node rank) of a multi-node job (default 0).")
@click.option("--json", "as_json", is_flag=True, help="Print {job_id, state, attempt, log_path, text} as JSON.")
def logs(job_id: str, follow: bool, attempt: int | None, tail: int | None, rank: int, as_json: bool) -> None:
    """Print an attempt's combined stdout/stderr; --follow keeps going across new attempts."""
    if as_json and follow:
        fail("--json prints the log once; drop --follow (poll `jobs logs ID --json` or `jobs wait ID` instead)")
    job = _views([job_id])[0]
    try:
        check_attempt(job, attempt, rank)
    except BadInput as err:
        fail(str(err))
    if as_json:
        write_log_json(job, attempt, tail, rank)
        return
    if not follow:
        if not job["attempts"]:
            sys.stderr.write(not_started(job) + "\n")
            return
        from autoresearch.cli._logs import log_path

        print_file(log_path(job, attempt or job["attempts"][-1]["number"], rank), tail, 0)
        return
    with _client(autostart=False) as client:
        typed = client.get(job_id)
        while not typed.attempts:
            if typed.state.final:
                err_console.print(not_started(typed.model_dump(mode="json")), highlight=False, soft_wrap=True,
                                  markup=False)
                return
            time.sleep(0.2)
            typed = client.get(job_id)
        number = attempt or typed.attempts[-1].number
        offset = print_file(client.log_path(job_id, number, rank), tail, 0)
        while True:
            typed = client.get(job_id)
            latest = typed.attempts[-1].number
            offset = print_file(client.log_path(job_id, number, rank), None, offset)
            if attempt is None and latest != number:
                number, offset = latest, 0
                sys.stderr.write(f"--- attempt {number} ---\n")
                continue
            if typed.state.final:
                break
            time.sleep(0.2)


@cli.command("cancel")
@click.argument("job_id")
@click.option("--reason", default="", help="Recorded in the job's events.")
@json_option
def cancel(job_id: str, reason: str, as_json: bool) -> None:
    """Cancel a job: a pending one at once, a running one by SIGTERM, grace, SIGKILL."""
    from compute import ComputeError

    try:
        with _client() as client:
            job = client.cancel(job_id, reason)
    except ComputeError as err:
        fail(str(err))
    if as_json:
        print_json(job)
    elif job.state == JobState.running:
        console.print(f"{job.id}: stopping (SIGTERM sent; SIGKILL after the grace period)", highlight=False)
    else:
        console.print(f"{job.id}: {job.state.value} ({job.state_reason})", highlight=False)


@cli.command("priority")
@click.argument("job_id")
@click.argument("priority")
@json_option
def set_priority(job_id: str, priority: str, as_json: bool) -> None:
    """Change a pending or running job's priority (PRIORITY: 0-100 or a name)."""
    from compute import ComputeError

    try:
        with _client() as client:
            job = client.set_priority(job_id, priority)
    except ComputeError as err:
        fail(str(err))
    if as_json:
        print_json(job)
    else:
        console.print(f"{job.id}: priority {job.priority} ({priority_name(job.priority)})", highlight=False)


@cli.command("wait")
@click.argument("job_ids", nargs=-1, required=True)
@click.option("--timeout", type=click.FloatRange(min=0), help="Give up after S seconds (exit 124).")
@json_option
def wait(job_ids: tuple[str, ...], timeout: float | None, as_json: bool) -> None:
    """Wait until the jobs end. Exit 0 if all succeeded, 1 if any failed or was cancelled, 124 on timeout."""
    jobs = _ended(list(job_ids))
    if jobs is None:  # some still pending or running (or unknown: Client names it)
        from compute import ComputeError

        try:
            with _client() as client:
                jobs = [j.model_dump(mode="json") for j in client.wait(list(job_ids), timeout=timeout)]
        except ComputeError as err:
            fail(str(err))
    if as_json:
        print_json(jobs)
    else:
        for j in jobs:
            console.print(f"{j['id']}: {j['state']} ({j['state_reason']})", highlight=False)
    if not all(JobState(j["state"]).final for j in jobs):
        raise click.exceptions.Exit(124)
    if any(j["state"] != "succeeded" for j in jobs):
        raise click.exceptions.Exit(1)


def _ended(job_ids: list[str]) -> list[dict[str, Any]] | None:
    """The views of these jobs when every one has ended (a wait on them answers at once), else None."""
    with _reading() as conn:
        views = job_views(conn, job_ids) if conn is not None else []
    return views if len(views) == len(job_ids) and all(JobState(v["state"]).final for v in views) else None
