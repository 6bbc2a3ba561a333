"""What the typer commands and the fast path (autoresearch/cli/_fast.py) share, written once and
importing neither typer, rich nor pydantic: flag values -> job fields, the JSON and the error
lines they print."""

from __future__ import annotations

import json
import os
import sys
from typing import Any


class BadInput(Exception):
    """A flag value the command refuses (exit 2); `str()` says what to write instead."""


def write_json(obj: Any) -> None:
    """What `--json` prints: the value as indented JSON on stdout."""
    sys.stdout.write(json.dumps(obj, indent=2, default=str) + "\n")


def write_error(message: str) -> None:
    """An error paragraph on stderr, as `fail` prints it (`error:` in bold red on a terminal)."""
    color = sys.stderr.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    sys.stderr.write(("\x1b[1;31merror:\x1b[0m " if color else "error: ") + message + "\n")


def check_states(states: list[str]) -> None:
    """`jobs list --state` values must be job states."""
    from compute.states import JobState

    allowed = [s.value for s in JobState]
    for s in states:
        if s not in allowed:
            raise BadInput(f"--state {s!r} is not a job state; use one of {', '.join(allowed)}")


def parse_labels(pairs: list[str]) -> dict[str, str]:
    """`--label key=value` flags as a dict."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise BadInput(f"--label {pair!r} is not key=value; write it like --label campaign=lr-sweep")
        out[key] = value
    return out


def parse_data(pairs: list[str]) -> dict[str, str]:
    """`--data NAME=PATH` flags as a dict, paths made absolute (against this process's cwd)."""
    out = {}
    for pair in pairs:
        name, sep, path = pair.partition("=")
        if not sep or not name or not path:
            raise BadInput(f"--data {pair!r} is not NAME=PATH; write it like --data train=/datasets/train.bin")
        out[name] = os.path.abspath(path)
    return out


def submit_fields(command: list[str], name: str, gpus: int, nodes: int, launcher: str, priority: str,
                  no_preemptible: bool, project: str | None, max_retries: int, time_limit: float | None, grace: float | None,
                  progress_timeout: float | None, label: list[str], key: str | None,
                  image: str | None, runtime: str | None, data: list[str]) -> dict[str, Any]:
    """`jobs submit`'s flags (named as its parameters) as the JobSpec fields to validate."""
    fields = {
        "name": name, "argv": command, "resources": {"gpus": gpus, "nodes": nodes}, "launcher": launcher,
        "priority": priority, "preemptible": not no_preemptible, "max_retries": max_retries, "time_limit_s": time_limit,
        "grace_s": grace, "progress_timeout_s": progress_timeout, "labels": parse_labels(label), "idempotency_key": key, "image": image,
        "container_runtime": runtime, "data": parse_data(data), "project": project,
    }
    if runtime is not None and image is None:
        raise BadInput("--runtime needs --image IMG: it picks the CLI that runs the image")
    return {k: v for k, v in fields.items() if v is not None}


def dry_run_view(spec: dict[str, Any]) -> dict[str, Any]:
    """What `--dry-run` prints, from the resolved spec's JSON: env by names only (values may be secret)."""
    return {"dry_run": True, "spec": {**spec, "env": sorted(spec["env"])}}
