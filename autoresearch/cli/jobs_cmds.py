"""`autoresearch jobs submit | list | status | logs | cancel | wait | priority`."""

from __future__ import annotations

import sys
import time
from datetime import datetime

import typer
from pydantic import ValidationError
from rich.table import Column, Table
from rich.text import Text

from autoresearch.cli._common import JSON_OPTION, console, err_console, fail, print_json, validation_message
from autoresearch.cli._logs import check_attempt, write_log_json, not_started, print_file, reason
from autoresearch.cli._plain import BadInput, check_states, dry_run_view, parse_labels, submit_fields
from compute import Client, ComputeError, Job, JobSpec, JobState, priority_name
from compute.control import daemon_info, not_responding

jobs_app = typer.Typer(help="Submit, inspect, cancel and wait for jobs.", no_args_is_help=True)
cli = typer.Typer()
cli.add_typer(jobs_app, name="jobs")


def _client(autostart: bool = True) -> Client:
    return Client(autostart=autostart)


def _labels(pairs: list[str]) -> dict[str, str]:
    try:
        return parse_labels(pairs)
    except BadInput as err:
        fail(str(err))


def _when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts).strftime("%H:%M:%S") if ts else "-"


@jobs_app.command("submit", context_settings={"allow_interspersed_args": False})
def submit(
    command: list[str] = typer.Argument(..., help="The command and its arguments, after `--`."),
    name: str = typer.Option("job", "--name", help="A human-readable name."),
    gpus: int = typer.Option(0, "--gpus", help="GPU slots per node, all on one node."),
    nodes: int = typer.Option(1, "--nodes", help="Distinct nodes the job spans (a gang; --gpus on each)."),
    launcher: str = typer.Option("none", "--launcher", help="none (argv as is) or torchrun (argv under torchrun)."),
    priority: str = typer.Option("normal", "--priority", help="0-100 or idle|low|normal|high|urgent."),
    no_preemptible: bool = typer.Option(False, "--no-preemptible", help="Never stop it for other work."),
    project: str | None = typer.Option(None, "--project", help="Project whose quota it runs under (default: default)."),
    max_retries: int = typer.Option(0, "--max-retries", help="Retries after user failures (with backoff)."),
    time_limit: float | None = typer.Option(None, "--time-limit", help="Seconds per attempt before it is stopped."),
    grace: float | None = typer.Option(None, "--grace", help="Seconds from SIGTERM to SIGKILL for this job."),
    progress_timeout: float | None = typer.Option(
        None, "--progress-timeout", help="Seconds without log output after which an attempt is stopped as hung "
        "(infra) and requeued."),
    label: list[str] = typer.Option([], "--label", help="key=value; repeatable."),
    key: str | None = typer.Option(None, "--key", help="Idempotency key: the same key returns the same job."),
    image: str | None = typer.Option(None, "--image", help="Run inside this container image."),
    runtime: str | None = typer.Option(None, "--runtime", help="docker (default) or podman, with --image."),
    data: list[str] = typer.Option([], "--data", help="NAME=PATH dataset (AR_DATA_<NAME>); repeatable."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Validate and print the resolved spec as JSON; submit nothing."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Queue a job and print its id: `autoresearch jobs submit --gpus 1 -- python train.py`.
    The job runs with your PATH and virtualenv; a bare `python` is the one your shell runs."""
    try:
        fields = submit_fields(command, name, gpus, nodes, launcher, priority, no_preemptible, project, max_retries,
                               time_limit, grace, progress_timeout, label, key, image, runtime, data)
    except BadInput as err:
        fail(str(err))
    try:
        spec = JobSpec.model_validate(fields)
    except ValidationError as err:
        fail(validation_message("job", err))
    try:
        with _client(autostart=not dry_run) as client:
            if dry_run:
                print_json(dry_run_view(client.resolve(spec).model_dump(mode="json")))
                return
            job = client.submit(spec)
    except ComputeError as err:
        fail(str(err))
    if as_json:
        print_json(job)
    else:
        sys.stdout.write(job.id + "\n")


def _reason(job: Job) -> str:
    return reason(job.model_dump(mode="json"))


@jobs_app.command("list")
def list_jobs(
    state: list[str] = typer.Option([], "--state", help="Only these states (repeatable)."),
    label: list[str] = typer.Option([], "--label", help="key=value; all must match (repeatable)."),
    limit: int = typer.Option(50, "--limit", min=1),
    as_json: bool = JSON_OPTION,
) -> None:
    """Jobs, newest first."""
    try:
        check_states(state)
    except BadInput as err:
        fail(str(err))
    with _client(autostart=False) as client:
        jobs = client.list(states=state or None, labels=_labels(label) or None, limit=limit)
    if as_json:
        print_json(jobs)
        return
    table = Table(Column("id", no_wrap=True, min_width=max((len(j.id) for j in jobs), default=2)),
                  *(Column(c, overflow="fold") for c in ("name", "state", "priority", "gpus", "attempts", "updated",
                                                          "reason")))
    for j in jobs:
        table.add_row(j.id, j.spec.name, j.state.value, priority_name(j.priority), str(j.spec.resources.gpus),
                      str(len(j.attempts)), _when(j.updated_at), _reason(j))
    console.print(table)


def _get(client: Client, job_id: str) -> Job:
    try:
        return client.get(job_id)
    except ComputeError as err:
        fail(str(err))


@jobs_app.command("status")
def status(job_id: str = typer.Argument(...), as_json: bool = JSON_OPTION) -> None:
    """One job: state, priority, retries and its attempts; a daemon that stopped ticking is named."""
    with _client(autostart=False) as client:
        job = _get(client, job_id)
        silent = None if job.state.final else not_responding(daemon_info(client.paths))
    if as_json:
        print_json(job)
        return
    lines = [f"{job.id} {job.spec.name!r}: {job.state.value} ({job.state_reason})",
             f"priority {job.priority} ({priority_name(job.priority)}), retries {job.retries_used}/{job.spec.max_retries}",
             f"checkpoint dir: {job.checkpoint_dir}"]
    if job.state == JobState.pending and job.waiting_reason:
        start = _when(job.estimated_start) if job.estimated_start else "unknown"
        lines.append(f"waiting: {job.waiting_reason}; queue position {job.queue_position}, estimated start {start}")
    lines += [f"attempt {a.number} log: {a.log_path}" for a in job.attempts]
    if silent is not None:
        lines.append(silent)
    sys.stdout.write("\n".join(lines) + "\n")  # plain lines: ids and paths are never cut at any width
    if job.attempts:
        table = Table(*(Column(c, overflow="fold") for c in ("attempt", "node", "gpus", "started", "ended", "outcome",
                                                              "exit")))
        for a in job.attempts:
            table.add_row(str(a.number), a.node, ",".join(map(str, a.gpus)) or "-", _when(a.started_at),
                          _when(a.ended_at), a.outcome.value if a.outcome else "running",
                          "" if a.exit_code is None else str(a.exit_code))
        console.print(table)


@jobs_app.command("logs")
def logs(
    job_id: str = typer.Argument(...),
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing until the job ends."),
    attempt: int | None = typer.Option(None, "--attempt", help="Attempt number (default: the latest)."),
    tail: int | None = typer.Option(None, "--tail", min=0, help="Only the last N lines."),
    rank: int = typer.Option(0, "--rank", help="Gang member (node rank) of a multi-node job (default 0)."),
    as_json: bool = typer.Option(False, "--json", help="Print {job_id, state, attempt, log_path, text} as JSON."),
) -> None:
    """Print an attempt's combined stdout/stderr; --follow keeps going across new attempts."""
    if as_json and follow:
        fail("--json prints the log once; drop --follow (poll `jobs logs ID --json` or `jobs wait ID` instead)")
    with _client(autostart=False) as client:
        job = _get(client, job_id)
        try:
            check_attempt(job.model_dump(mode="json"), attempt, rank)
        except BadInput as err:
            fail(str(err))
        if as_json:
            write_log_json(job.model_dump(mode="json"), attempt, tail, rank)
            return
        while not job.attempts:
            if not follow or job.state.final:
                err_console.print(Text(not_started(job.model_dump(mode="json"))), highlight=False, soft_wrap=True)
                return
            time.sleep(0.2)
            job = client.get(job_id)
        number = attempt or job.attempts[-1].number
        offset = print_file(client.log_path(job_id, number, rank), tail, 0)
        while follow:
            job = client.get(job_id)
            latest = job.attempts[-1].number
            offset = print_file(client.log_path(job_id, number, rank), None, offset)
            if attempt is None and latest != number:
                number, offset = latest, 0
                sys.stderr.write(f"--- attempt {number} ---\n")
                continue
            if job.state.final:
                break
            time.sleep(0.2)


@jobs_app.command("cancel")
def cancel(
    job_id: str = typer.Argument(...),
    reason: str = typer.Option("", "--reason", help="Recorded in the job's events."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Cancel a job: a pending one at once, a running one by SIGTERM, grace, SIGKILL."""
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


@jobs_app.command("priority")
def set_priority(job_id: str = typer.Argument(...), priority: str = typer.Argument(..., help="0-100 or a name."),
                 as_json: bool = JSON_OPTION) -> None:
    """Change a pending or running job's priority."""
    try:
        with _client() as client:
            job = client.set_priority(job_id, priority)
    except ComputeError as err:
        fail(str(err))
    if as_json:
        print_json(job)
    else:
        console.print(f"{job.id}: priority {job.priority} ({priority_name(job.priority)})", highlight=False)


@jobs_app.command("wait")
def wait(
    job_ids: list[str] = typer.Argument(..., help="One or more job ids."),
    timeout: float | None = typer.Option(None, "--timeout", min=0, help="Give up after S seconds (exit 124)."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Wait until the jobs end. Exit 0 if all succeeded, 1 if any failed or was cancelled, 124 on timeout."""
    try:
        with _client() as client:
            jobs = client.wait(job_ids, timeout=timeout)
    except ComputeError as err:
        fail(str(err))
    if as_json:
        print_json(jobs)
    else:
        for j in jobs:
            console.print(f"{j.id}: {j.state.value} ({j.state_reason})", highlight=False)
    if not all(j.state.final for j in jobs):
        raise typer.Exit(124)
    if any(j.state != JobState.succeeded for j in jobs):
        raise typer.Exit(1)
