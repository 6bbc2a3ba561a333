"""`FakeBackend`: a real `Backend` whose attempts "run" in memory, for scheduler and daemon tests.

No process is started. Each launch is answered by a `FakeRun` (what the attempt does:
its exit code, how long it runs, the lines it writes to its log, the signals it ignores),
taken from `expect(key, run)` if the test scripted that attempt, else from the `script`
callable (default: exit 0 at once). Time is read from `clock` (default `time.monotonic`),
so a test that passes its own clock decides when attempts end without sleeping.

The attempts live on a `FakeHost`, which outlives the backend as a real host outlives the
daemon: `FakeBackend(host=old.host)` after `old.close()` is a daemon restart, and `adopt`
finds the attempts again by key. The backend keeps the protocol's rules (compute/backends/
base.py): `signal` ends a running attempt with `-signum` unless the run ignores that signal
(SIGKILL cannot be ignored), signalling a gone attempt is no error, `poll` and `adopt`
return None while it runs, an unknown key adopts as lost (`exit_code` None), and `release`
forgets the attempt. Everything it was asked is recorded (`host.launched`, `host.signals`,
`host.released`) for tests to assert on.
"""

from __future__ import annotations

import math
import signal as signals
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compute.backends.base import AttemptExit, LaunchError, LaunchRequest
from compute.records import Node


@dataclass(frozen=True)
class FakeRun:
    """What one fake attempt does."""

    exit_code: int | None = 0
    """How it ends by itself; None: it vanishes and nobody knows how it ended (lost)."""
    duration_s: float = 0.0
    """Seconds on the backend's clock until it ends by itself; `math.inf`: until signalled."""
    lines: tuple[str, ...] = ()
    """Lines written to the attempt's log when it starts."""
    ignores: frozenset[int] = frozenset()
    """Signals it survives (e.g. SIGTERM for a job that does not stop); SIGKILL always ends it."""


FOREVER = FakeRun(duration_s=math.inf)
"""An attempt that runs until it is signalled."""


@dataclass
class _Attempt:
    request: LaunchRequest
    run: FakeRun
    started: float
    ended: AttemptExit | None = None


@dataclass
class FakeHost:
    """The in-memory "machine" a FakeBackend runs attempts on; it outlives any one backend."""

    clock: Callable[[], float] = time.monotonic
    """Where time is read from (seconds)."""
    attempts: dict[str, _Attempt] = field(default_factory=dict)
    launched: list[LaunchRequest] = field(default_factory=list)
    """Every launch request, in order."""
    signals: list[tuple[str, int]] = field(default_factory=list)
    """Every (key, signum) sent, in order."""
    released: list[str] = field(default_factory=list)
    """Keys released by the daemon, in order."""


class FakeBackend:
    """A Backend that runs attempts in memory (see the module docstring)."""

    name = "fake"

    def __init__(self, nodes: Sequence[Node] | None = None, *, script: Callable[[LaunchRequest], FakeRun] | None = None,
                 host: FakeHost | None = None) -> None:
        self._nodes = list(nodes) if nodes is not None else [Node(name="fake", gpus=[0, 1])]
        self._script = script or (lambda request: FakeRun())
        self._expected: dict[str, FakeRun] = {}
        self.host = host or FakeHost()
        self.closed = False

    def expect(self, key: str, run: FakeRun) -> None:
        """Script what the attempt `key` (`<job id>.<attempt number>`) does when it is launched."""
        self._expected[key] = run

    def nodes(self) -> list[Node]:
        return list(self._nodes)

    def launch(self, request: LaunchRequest) -> dict[str, Any]:
        if not Path(request.cwd).is_dir():
            raise LaunchError(f"working directory {request.cwd} does not exist (attempt {request.key})")
        if request.node not in {n.name for n in self._nodes}:
            raise LaunchError(f"attempt {request.key} placed on {request.node!r}, not a node of this fake backend",
                              infra=True)
        run = self._expected.pop(request.key, None) or self._script(request)
        request.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(request.log_path, "a") as fh:
            fh.write("".join(f"{line}\n" for line in run.lines))
        self.host.launched.append(request)
        self.host.attempts[request.key] = _Attempt(request, run, self.host.clock())
        return {"fake": request.key}

    def poll(self, key: str) -> AttemptExit | None:
        attempt = self.host.attempts.get(key)
        if attempt is None:
            return AttemptExit(None)
        if attempt.ended is None and self.host.clock() - attempt.started >= attempt.run.duration_s:
            attempt.ended = AttemptExit(attempt.run.exit_code)
        return attempt.ended

    def signal(self, key: str, signum: int) -> None:
        self.host.signals.append((key, signum))
        attempt = self.host.attempts.get(key)
        if attempt is None or self.poll(key) is not None:
            return
        if signum == signals.SIGKILL or signum not in attempt.run.ignores:
            attempt.ended = AttemptExit(-signum)

    def adopt(self, key: str, handle: dict[str, Any] | None) -> AttemptExit | None:
        return self.poll(key)

    def release(self, key: str) -> None:
        self.host.attempts.pop(key, None)
        self.host.released.append(key)

    def close(self) -> None:
        self.closed = True
