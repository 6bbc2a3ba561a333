"""Stop, inspect and remove an attempt's container through its runtime's CLI.

Signals to the `docker run` / `podman run` client do not stop a container (SIGKILL kills
only the client), so a backend that runs containers stops them here: `stop -t <grace>`
(SIGTERM to the container's init, SIGKILL after the grace; started in the background so
the daemon's loop never waits on it), `kill` when the daemon's own grace runs out, `rm -f`
once the end is recorded. `state` reads a container after a daemon restart: running, or
ended with its exit code, or absent. Every call has a time bound.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass

from compute.container import ContainerRun

_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class ContainerState:
    """What the runtime says of one container."""

    running: bool
    """Still running (or paused, restarting, stopping); one created but never started is ended."""
    exit_code: int | None
    """Its exit code once ended; None while it runs."""


def stop(run: ContainerRun) -> subprocess.Popen[bytes] | None:
    """Start `RUNTIME stop -t GRACE NAME` in the background; the caller reaps the process."""
    try:
        return subprocess.Popen(
            [run.runtime.value, "stop", "-t", str(max(0, round(run.grace_s))), run.name],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, close_fds=True,
        )
    except OSError:
        return None  # the runtime is gone: the client's process group is signalled anyway


def kill(run: ContainerRun) -> None:
    """`RUNTIME kill NAME` (SIGKILL), waiting for the runtime to answer."""
    _run([run.runtime.value, "kill", run.name])


def remove(run: ContainerRun) -> None:
    """`RUNTIME rm -f NAME`: the container and its anonymous state; absent is fine."""
    _run([run.runtime.value, "rm", "-f", run.name])


def state(run: ContainerRun) -> ContainerState | None:
    """The container's state, or None when the runtime knows no such container (or is gone)."""
    out = _run([run.runtime.value, "inspect", "--type", "container", "--format", "{{json .State}}", run.name])
    if out is None:
        return None
    try:
        data = json.loads(out)
    except json.JSONDecodeError:
        return None
    status = str(data.get("Status", "")).lower()
    if data.get("Running") or status in ("running", "paused", "restarting", "stopping"):
        return ContainerState(running=True, exit_code=None)
    code = data.get("ExitCode")
    return ContainerState(running=False, exit_code=int(code) if isinstance(code, int) else None)


def _run(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT_S, stdin=subprocess.DEVNULL,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None
