"""`autoresearch jobs submit`: its options are `compute.JobRequest`'s fields (declared once, in
compute/spec.py), each named `--field-name` (`_s` dropped: `--time-limit`, `--grace`;
`container_runtime` is `--runtime`), with the field's docstring as its help. They are read from
`_submit_options.py`, generated from `JobRequest` (tools/gen_docs.py, checked by
tests/test_generated_docs.py), so listing or parsing them imports no pydantic.

A running daemon validates, resolves and queues the spec itself (compute/submissions.py: no
Client round trips); without one, `compute.Client` starts it and submits."""

from __future__ import annotations

import sys
from contextlib import closing
from typing import Any

import click

from autoresearch.cli._common import fail, json_option, print_json
from autoresearch.cli._plain import BadInput, dry_run_view, submit_fields, write_error
from autoresearch.cli._submit_options import FIELDS, RESOURCES

cli = click.Group()

FLAGS = {"container_runtime": "--runtime"}
"""Fields whose flag is not `--` + the name with `_` as `-` and a trailing `_s` dropped."""
NAMED = {"priority"}
"""Number fields that also take a name (`--priority high`): passed on as text."""


def flag(field: str) -> str:
    """The option that sets `JobRequest.<field>`."""
    return FLAGS.get(field) or "--" + field.removesuffix("_s").replace("_", "-")


def _request_option(name: str, types: tuple[str, ...], help_text: str) -> Any:
    """The click option of one `JobRequest` field: its type from the annotation's `types`, its help
    the docstring's first sentence; not given -> None (the JobSpec default)."""
    kinds = set(types)
    if kinds == {"bool"}:
        word = flag(name)[2:]
        return click.option(f"--{word}/--no-{word}", name, default=None, help=help_text)
    kind = str if name in NAMED or not kinds <= {"int", "float"} else (float if "float" in kinds else int)
    return click.option(flag(name), name, type=kind, default=None, help=help_text)


def _with_request_options(func: Any) -> Any:
    for field in reversed(FIELDS):
        func = _request_option(*field)(func)
    return func


@cli.command("submit", context_settings={"allow_interspersed_args": False})
@click.argument("command", nargs=-1, required=True)
@click.option("--name", help="A human-readable name.")
@_with_request_options
@click.option("--label", multiple=True, help="key=value; repeatable.")
@click.option("--key", help="Idempotency key: the same key returns the same job.")
@click.option("--data", multiple=True, help="NAME=PATH dataset (AR_DATA_<NAME>); repeatable.")
@click.option("--secret-env", multiple=True, help="Name of a credential the job reads from the daemon's "
              "environment (HF_TOKEN ...); only the name is stored; repeatable.")
@click.option("--dry-run", is_flag=True, help="Validate and print the resolved spec as JSON; submit nothing.")
@json_option
def submit(command: tuple[str, ...], name: str | None, label: tuple[str, ...], key: str | None,
           data: tuple[str, ...], secret_env: tuple[str, ...], dry_run: bool, as_json: bool, **request: Any) -> None:
    """Queue a job and print its id: `autoresearch jobs submit --gpus 1 -- python train.py`.
    The job runs with your PATH and virtualenv; a bare `python` is the one your shell runs."""
    try:
        fields = submit_fields(list(command), request, set(RESOURCES), name, list(label), key,
                               list(data), list(secret_env))
    except BadInput as err:
        fail(str(err))
    if _through_daemon(fields, dry_run, as_json):  # the daemon validates: the same message as below
        return
    from pydantic import ValidationError

    from compute.errors import validation_message
    from compute.spec import JobSpec

    try:
        spec = JobSpec.model_validate(fields)
    except ValidationError as err:
        fail(validation_message("job", err))
    from compute import Client, ComputeError

    try:
        with Client(autostart=not dry_run) as client:
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


def _through_daemon(fields: dict[str, Any], dry_run: bool, as_json: bool) -> bool:
    """Submit through the running daemon's submissions table; False when no daemon answers
    (nothing was queued then, and `Client` takes over)."""
    from compute.paths import ComputePaths
    from compute.reads import job_views, open_store
    from compute.submissions import daemon_takes_submissions, request
    from compute.submitter import Submitter

    paths = ComputePaths.of()
    if not daemon_takes_submissions(paths):
        return False
    conn = open_store(paths)
    if conn is None:
        return False
    with closing(conn):
        reply = request(paths, conn, fields, Submitter.here(), dry_run=dry_run)
        if reply is None or "fallback" in reply:
            return False
        if "error" in reply:
            write_error(reply["error"])
            raise click.exceptions.Exit(int(reply["code"]))
        if dry_run:
            print_json(dry_run_view(reply["spec"]))
        elif as_json:
            print_json(job_views(conn, [reply["job_id"]])[0])
        else:
            sys.stdout.write(reply["job_id"] + "\n")
    return True


__all__ = ["cli", "flag"]
