"""The node agent of the Ray backend: one detached actor per (home, Ray node) runs attempts there.

The daemon places an attempt on a node; the backend hands it to that node's agent,
which spawns the command as a subprocess in its own session (so signals reach the whole
process group), appends its output to the attempt's log, and answers `run` with the exit
code when the command ends. The agent is a named, detached async actor: it outlives the
daemon, and a restarted daemon finds it by name (`agent-<ray node id>` in the home's
namespace) and asks it about its attempts (`status`, `wait`).

If the agent dies (its node died, or it was killed), its commands must not run on
unwatched: each attempt gets a watcher, a tiny `sh` outside the agent's process tree
that blocks reading a pipe only the agent holds. On a normal end the agent writes a line
and the watcher exits; at EOF (the agent is gone) the watcher SIGKILLs the attempt's
process group. The daemon then sees the agent's `run` fail and records the attempt lost.

Processes that left the attempt's process group (`setsid`, a daemonized child) are found by the
attempt's marker in this node's /proc (compute/backends/attempt_procs.py): signals reach them
too, and once the command has ended the agent SIGKILLs them and answers `run` only when the last
is gone. (No cgroups here: a process that also cleared its environment is not found.)

The module imports no Ray: `compute.backends.ray` wraps `NodeAgent` with `ray.remote`.
"""

from __future__ import annotations

import asyncio
import time
import os
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compute.backends.attempt_procs import Tracking
from compute.backends.local import free_port
from compute.isolation import seal_process
from compute.jobenv import allowed_env

WATCHER = (
    'exec 3<&0; (trap "" TERM INT HUP; if read -r _ <&3; then exit 0; fi; kill -KILL -"$1") '
    ">/dev/null 2>&1 &"
)
"""Forks a watcher that SIGKILLs process group $1 when its stdin (a pipe) hits EOF."""
_DROPPED_ENV = ("OMP_NUM_THREADS", "RAY_JOB_ID", "RAY_RAYLET_PID", "RAY_CLIENT_MODE", "RAY_LD_PRELOAD_ON_WORKERS")
"""Set by Ray for its own worker processes (OMP_NUM_THREADS=1 ...): an attempt must not inherit them."""


@dataclass
class _Run:
    """One attempt on this node."""

    pid: int | None = None
    ended: asyncio.Future[int] | None = None
    reaped: bool = False
    watch_fd: int | None = None
    stop: int | None = None
    """A signal that arrived before the command started: it is then not started."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    tracking: Tracking | None = None
    """Finds the attempt's processes outside its process group (its marker)."""


class NodeAgent:
    """Runs attempts on the node it lives on; every method is keyed by the attempt key."""

    def __init__(self, node: str) -> None:
        self.node = node
        seal_process()  # the attempts it starts (and their secrets) are out of other jobs' reach
        self._runs: dict[str, _Run] = {}
        self._base_env = {k: v for k, v in allowed_env().items() if k not in _DROPPED_ENV}

    async def run(self, key: str, argv: list[str], env: dict[str, str], cwd: str, log_path: str) -> int:
        """Start the attempt and return its exit code (negative: killed by that signal)."""
        run = self._runs.setdefault(key, _Run())
        if run.ended is not None:
            return await run.ended
        run.ended = asyncio.get_running_loop().create_future()
        run.tracking = Tracking.of(env, None)
        if run.stop is not None:  # stopped before it started, as the local backend does
            run.ended.set_result(-run.stop)
            return -run.stop
        code = self._start(key, run, argv, env, cwd, Path(log_path))
        if code is not None:
            run.ended.set_result(code)
        return await run.ended

    def _start(self, key: str, run: _Run, argv: list[str], env: dict[str, str], cwd: str, log: Path) -> int | None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            if not Path(cwd).is_dir():
                out.write(f"[autoresearch] working directory {cwd} does not exist on Ray node {self.node}\n".encode())
                return 126
            try:
                proc = subprocess.Popen(
                    argv, cwd=cwd, env={**self._base_env, **env}, stdin=subprocess.DEVNULL, stdout=out,
                    stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
                )
            except OSError as err:
                missing = isinstance(err, FileNotFoundError)
                out.write(f"[autoresearch] {argv[0]}: {'not found' if missing else err.strerror}"
                          f" (on Ray node {self.node})\n".encode())
                return 127 if missing else 126
        run.pid = proc.pid
        run.watch_fd = _start_watcher(proc.pid)
        loop = asyncio.get_running_loop()
        threading.Thread(target=self._reap, args=(run, proc, loop), name=f"reap-{key}", daemon=True).start()
        return None

    def _reap(self, run: _Run, proc: subprocess.Popen[bytes], loop: asyncio.AbstractEventLoop) -> None:
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
        with run.lock:
            # The leader is a zombie, so its group id cannot be reused yet: clean up what
            # the command left behind, dismiss the watcher, then reap the leader.
            _killpg(proc.pid, signal.SIGKILL)
            if run.watch_fd is not None:
                _dismiss(run.watch_fd)
                run.watch_fd = None
            code = proc.wait()
            run.reaped = True
        while run.tracking is not None and run.tracking.signal(signal.SIGKILL):
            time.sleep(0.02)  # what it left behind holds its GPUs: the attempt ends when the last is gone
        loop.call_soon_threadsafe(_settle, run.ended, code)

    def signal(self, key: str, signum: int) -> None:
        """Signal the attempt's process group; before it started, keep the stop for `run`."""
        run = self._runs.setdefault(key, _Run())
        with run.lock:
            if run.pid is None:
                run.stop = run.stop or signum
                return
            if not run.reaped:
                _killpg(run.pid, signum)
        if run.tracking is not None:
            run.tracking.signal(signum)

    def status(self, key: str) -> dict[str, Any]:
        """{"state": "unknown" | "running" | "ended", "exit_code": int (ended)}."""
        run = self._runs.get(key)
        if run is None or run.ended is None:
            return {"state": "unknown"}
        if not run.ended.done():
            return {"state": "running", "pid": run.pid}
        return {"state": "ended", "exit_code": run.ended.result()}

    async def wait(self, key: str) -> int | None:
        """The exit code once the attempt ends; None if this agent never ran it."""
        run = self._runs.get(key)
        if run is None or run.ended is None:
            return None
        return await run.ended

    def forget(self, key: str) -> None:
        """The daemon recorded the end: drop what is kept about the attempt."""
        self._runs.pop(key, None)

    def free_port(self) -> int:
        """A TCP port free on this node now (MASTER_PORT of a gang whose rank 0 runs here)."""
        return free_port("0.0.0.0")

    def running(self) -> int:
        """Attempts not yet forgotten (running, or ended and not yet recorded)."""
        return sum(1 for r in self._runs.values() if r.ended is not None)


def _start_watcher(pgid: int) -> int:
    """Fork the watcher of process group `pgid`; return the pipe end that keeps it waiting."""
    read_fd, write_fd = os.pipe()
    try:
        subprocess.run(["/bin/sh", "-c", WATCHER, "watch", str(pgid)], stdin=read_fd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, start_new_session=True, check=True)
    finally:
        os.close(read_fd)
    return write_fd


def _dismiss(write_fd: int) -> None:
    try:
        os.write(write_fd, b"done\n")
    except OSError:
        pass  # the watcher is gone already
    os.close(write_fd)


def _settle(future: asyncio.Future[int] | None, code: int) -> None:
    if future is not None and not future.done():
        future.set_result(code)


def _killpg(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass
