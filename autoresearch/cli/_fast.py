"""The CLI's fast path: the hot job commands without typer or pydantic (each costs 0.1-0.2 s to import).

`autoresearch.cli.main` offers every command line to `run` first. It answers

- `jobs status ID --json` and `jobs list [--state S] [--label K=V] [--limit N] --json` from the
  store with sqlite3 (compute/reads.py: the same row -> dict mapping the typed records are built
  from, so the JSON is the typer command's);
- `jobs logs ID [--attempt N] [--tail N] [--json]` (not `--follow`) from the store and the log file;
- `jobs submit [OPTIONS] [--] COMMAND...` (also `--dry-run`, `--json`) by asking the running
  daemon to validate, resolve and queue the spec (compute/submissions.py), which answers with
  the job id or the error message the typer command prints;

- `ui [--host H] [--port P] [--open] [--token T] [--read-only] [--allowed-host NAME ...]` by serving the dashboard without
  typer (its start-up is a target: under a second to the first page);

and returns None for anything else: another command, `--help`, a flag or value it does not
read exactly as click would, the human-readable tables, no daemon to submit to, a store that is
missing or needs upgrading. The typer app then runs the same command line, so behaviour and
output never depend on which path ran. The options each command here accepts are declared in
`COMMANDS` below; tests/autoresearch/cli/test_fast_path.py checks them against the typer
commands' declarations (names, kinds, defaults), so the two cannot drift.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from typing import Any, NamedTuple

from autoresearch.cli._logs import check_attempt, log_path, write_log_json, not_started, print_file
from autoresearch.cli._plain import BadInput, check_states, dry_run_view, parse_labels, submit_fields, write_error, write_json
from compute.errors import JobNotFound, store_unavailable
from compute.paths import ComputePaths
from compute.reads import job_views, list_job_ids, open_store


class Fallback(Exception):
    """This command line is the typer app's to run."""


class Option(NamedTuple):  # NamedTuples, not dataclasses: importing dataclasses costs inspect
    """One option as the typer command declares it."""

    param: str
    """The typer command's parameter name."""
    kind: type
    """bool: a flag; list: a repeatable string; str, int or float: one value converted so."""
    default: Any = None
    minimum: int | None = None
    """The option's `min=` (an IntRange), if any."""


class Command(NamedTuple):
    """One command the fast path reads: what answers it, its options, where options may stand."""

    handler: Callable[[dict[str, Any], list[str]], int]
    """(option values, arguments) -> exit code; raises Fallback to leave it to typer."""
    options: dict[str, Option]
    interspersed: bool = True
    """click's allow_interspersed_args: False stops option parsing at the first argument."""


def parse(command: Command, tokens: list[str]) -> tuple[dict[str, Any], list[str]]:
    """(option values by parameter name, the arguments), read as click reads them; Fallback for
    anything else (an unknown option, a value to convert that click might read otherwise)."""
    values = {opt.param: ([] if opt.kind is list else opt.default) for opt in command.options.values()}
    args: list[str] = []
    rest = list(tokens)
    while rest:
        token = rest.pop(0)
        if token == "--":
            args += rest
            break
        if not token.startswith("-") or token == "-":
            args.append(token)
            if not command.interspersed:
                args += rest
                break
            continue
        name, eq, value = token.partition("=")
        opt = command.options.get(name)
        if opt is None:
            raise Fallback(name)
        if opt.kind is bool:
            if eq:
                raise Fallback(token)
            values[opt.param] = True
            continue
        if not eq:
            if not rest:
                raise Fallback(token)
            value = rest.pop(0)  # whatever it is, as click takes it (`--max-retries -1`)
        values[opt.param] = _convert(opt, value, values[opt.param])
    return values, args


def _convert(opt: Option, value: str, before: Any) -> Any:
    if opt.kind is list:
        return [*before, value]
    try:
        converted = opt.kind(value)
    except ValueError:
        raise Fallback(value) from None  # typer says what is wrong with it
    if opt.minimum is not None and converted < opt.minimum:
        raise Fallback(value)
    return converted


def _paths() -> ComputePaths:
    return ComputePaths.of()


def _store(paths: ComputePaths) -> Any:
    conn = open_store(paths)
    if conn is None:
        raise Fallback("no store with the current schema: compute.Store opens it")
    return conn


def status(values: dict[str, Any], args: list[str]) -> int:
    if len(args) != 1 or not values["as_json"]:
        raise Fallback("the table")
    paths = _paths()
    job = _job(paths, _store(paths), args[0])
    if job is None:
        return 2
    write_json(job)
    return 0


def list_jobs(values: dict[str, Any], args: list[str]) -> int:
    if args or not values["as_json"]:
        raise Fallback("the table")
    check_states(values["state"])
    conn = _store(_paths())
    labels = parse_labels(values["label"])
    ids = list_job_ids(conn, values["state"] or None, labels or None, limit=values["limit"])
    write_json(job_views(conn, ids))
    return 0


def _job(paths: ComputePaths, conn: Any, job_id: str) -> dict[str, Any] | None:
    views = job_views(conn, [job_id])
    if not views:
        write_error(str(JobNotFound(job_id, str(paths.home))))
        return None
    return views[0]


def logs(values: dict[str, Any], args: list[str]) -> int:
    if len(args) != 1 or values["follow"]:
        raise Fallback("--follow")
    paths = _paths()
    job = _job(paths, _store(paths), args[0])
    if job is None:
        return 2
    check_attempt(job, values["attempt"], values["rank"])
    if values["as_json"]:
        write_log_json(job, values["attempt"], values["tail"], values["rank"])
    elif not job["attempts"]:
        sys.stderr.write(not_started(job) + "\n")
    else:
        print_file(log_path(job, values["attempt"] or job["attempts"][-1]["number"], values["rank"]), values["tail"], 0)
    return 0


def submit(values: dict[str, Any], args: list[str]) -> int:
    from compute.submissions import daemon_takes_submissions, request
    from compute.submitter import Submitter

    if not args:
        raise Fallback("no command")
    options = {k: v for k, v in values.items() if k not in ("dry_run", "as_json")}
    fields = submit_fields(args, **options)
    paths = _paths()
    if not daemon_takes_submissions(paths):
        raise Fallback("no daemon to submit through")
    conn = _store(paths)
    reply = request(paths, conn, fields, Submitter.here(), dry_run=values["dry_run"])
    if reply is None or "fallback" in reply:
        raise Fallback("the daemon did not answer")
    if "error" in reply:
        write_error(reply["error"])
        return int(reply["code"])
    if values["dry_run"]:
        write_json(dry_run_view(reply["spec"]))
    elif values["as_json"]:
        write_json(job_views(conn, [reply["job_id"]])[0])
    else:
        sys.stdout.write(reply["job_id"] + "\n")
    return 0


def ui(values: dict[str, Any], args: list[str]) -> int:
    if args:
        raise Fallback("an argument: typer says it is unexpected")
    from autoresearch.ui import UiError, checked_settings, serve
    from compute.isolation import seal_process

    seal_process()  # it holds the dashboard's token: jobs may not read it (compute/isolation.py)
    try:
        settings = checked_settings(values["host"], values["port"], values["token"], values["read_only"],
                                    allowed_hosts=tuple(values["allowed_host"]))
        serve(settings, open_browser=values["open_browser"], say=lambda line: print(line, flush=True))
    except UiError as exc:
        write_error(str(exc))
        return 2
    return 0


_JSON = Option("as_json", bool, False)

COMMANDS: dict[tuple[str, ...], Command] = {
    ("ui",): Command(ui, {
        "--host": Option("host", str, "127.0.0.1"), "--port": Option("port", int, 8765),
        "--open": Option("open_browser", bool, False), "--token": Option("token", str),
        "--read-only": Option("read_only", bool, False), "--allowed-host": Option("allowed_host", list, []),
    }),
    ("jobs", "status"): Command(status, {"--json": _JSON}),
    ("jobs", "list"): Command(list_jobs, {
        "--state": Option("state", list, []), "--label": Option("label", list, []),
        "--limit": Option("limit", int, 50, minimum=1), "--json": _JSON,
    }),
    ("jobs", "submit"): Command(submit, {
        "--name": Option("name", str, "job"), "--gpus": Option("gpus", int, 0),
        "--nodes": Option("nodes", int, 1), "--launcher": Option("launcher", str, "none"),
        "--progress-timeout": Option("progress_timeout", float),
        "--priority": Option("priority", str, "normal"), "--no-preemptible": Option("no_preemptible", bool, False),
        "--project": Option("project", str),
        "--max-retries": Option("max_retries", int, 0), "--time-limit": Option("time_limit", float),
        "--grace": Option("grace", float), "--label": Option("label", list, []), "--key": Option("key", str),
        "--image": Option("image", str), "--runtime": Option("runtime", str), "--data": Option("data", list, []),
        "--dry-run": Option("dry_run", bool, False), "--json": _JSON,
    }, interspersed=False),
    ("jobs", "logs"): Command(logs, {
        "--follow": Option("follow", bool, False), "-f": Option("follow", bool, False),
        "--attempt": Option("attempt", int), "--tail": Option("tail", int, minimum=0),
        "--rank": Option("rank", int, 0), "--json": _JSON,
    }),
}
"""The commands the fast path answers, with every option of each (as the typer command declares it)."""


def run(argv: list[str]) -> int | None:
    """The exit code of the command line `argv` (without the program name) when the fast path
    answered it; None when the typer app must run it (nothing was printed then)."""
    path = tuple(argv[:2]) if tuple(argv[:2]) in COMMANDS else tuple(argv[:1])
    command = COMMANDS.get(path)
    if command is None:
        return None
    try:
        values, args = parse(command, argv[len(path):])
        return command.handler(values, args)
    except Fallback:
        return None
    except BadInput as err:
        write_error(str(err))
        return 2
    except sqlite3.OperationalError as err:  # the fast path reads and writes the compute store only
        unavailable = store_unavailable(err, _paths().db)
        if unavailable is None:
            raise
        raise unavailable from err
