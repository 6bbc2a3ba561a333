"""What the commands print and parse, importing neither rich nor pydantic: flag values -> job
fields, the JSON and the error lines."""

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


def write_error(message: str, label: str = "error:", color: str = "1;31") -> None:
    """An error paragraph on stderr, as `fail` prints it (`error:` in bold red on a terminal)."""
    colored = sys.stderr.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    sys.stderr.write((f"\x1b[{color}m{label}\x1b[0m " if colored else f"{label} ") + message + "\n")
    sys.stderr.flush()  # before whatever stdout prints next, where both go to one stream


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


def submit_fields(command: list[str], request: dict[str, Any], resources: set[str], name: str | None,
                  label: list[str], key: str | None, data: list[str], secret_env: list[str]) -> dict[str, Any]:
    """`jobs submit`'s values as the JobSpec fields to validate: `request` holds the `JobRequest`
    options given (None: not given), those named in `resources` nested under `resources`."""
    given = {k: v for k, v in request.items() if v is not None}
    if given.get("container_runtime") is not None and given.get("image") is None:
        raise BadInput("--runtime needs --image IMG: it picks the CLI that runs the image")
    fields: dict[str, Any] = {k: v for k, v in given.items() if k not in resources}
    fields["resources"] = {k: v for k, v in given.items() if k in resources}
    fields |= {"argv": command, "labels": parse_labels(label), "data": parse_data(data), "secret_env": secret_env}
    return fields | ({"name": name} if name is not None else {}) | ({"idempotency_key": key} if key is not None else {})


def dry_run_view(spec: dict[str, Any]) -> dict[str, Any]:
    """What `--dry-run` prints, from the resolved spec's JSON: env by names only (values may be secret)."""
    return {"dry_run": True, "spec": {**spec, "env": sorted(spec["env"])}}
