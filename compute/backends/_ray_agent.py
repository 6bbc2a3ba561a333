"""The node agent of the Ray backend: one detached actor per (home, Ray node) runs attempts there.

The daemon places an attempt on a node; the backend hands it to that node's agent,
which spawns the command as a subprocess in its own session (so signals reach the whole
process group), appends its output to the attempt's log (with a remote store: to this
node's spool, which the backend reads back with `read_log`, after restoring the job's
folders from the store: `Stage`), and answers `run` with the exit code when the command
ends. A node lacking the working directory or program the daemon's host has raises
`NodeUnfit` instead (an infra failure, its message shown to the daemon). The agent is a named, detached async actor: it outlives the
daemon, and a restarted daemon finds it by name (`agent-<ray node id>` in the home's
namespace) and asks it about its attempts (`status`, `wait`).

An attempt may be staged behind another (`run_after`, compute/daemon_staging.py): the agent starts
it the moment that one ends here, with no call from the daemon in between, and answers with its
start time; `recall` takes it back before that.

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
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compute.backends.attempt_procs import Tracking
from compute.backends.local import free_port
from compute.backends.ray_checkpoints import CheckpointKeeper, restore
from compute.isolation import seal_process
from compute.errors import ComputeError
from compute.jobenv import allowed_env
from compute.storage import Storage

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
    started: bool = False
    """`run` (or `run_after`) began it: it was started, or failed to start."""
    ended: asyncio.Future[int] | None = None
    """Its exit code; made before it starts when an attempt staged behind it waits for it (`run_after`)."""
    reaped: bool = False
    watch_fd: int | None = None
    stop: int | None = None
    """A signal that arrived before the command started: it is then not started."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    tracking: Tracking | None = None
    """Finds the attempt's processes outside its process group (its marker)."""
    keeper: CheckpointKeeper | None = None
    """Keeps its checkpoint directory in the remote store while it runs (its folders come from a remote store)."""
    begun: asyncio.Future[float | None] | None = None
    """An attempt staged behind another (`run_after`): when it started, or None once it never will."""
    waited: bool = False
    """The backend watches its end (`wait`): a staged attempt nobody waits on is an orphan (`unstage`)."""


class NodeUnfit(Exception):
    """This node lacks what the attempt needs and the daemon's host has: an infra failure, whose
    message the daemon writes into the attempt's log after `NODE_UNFIT_MARKER`."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code
        """The exit code the attempt ends with (126: no working directory, 127: no program)."""

    def __reduce__(self) -> tuple[Any, ...]:
        return NodeUnfit, (str(self), self.code)


@dataclass(frozen=True)
class Stage:
    """An attempt's folders in a remote store (compute.storage): restored before it starts, the
    checkpoint directory kept there while it runs and when it ends (ray_checkpoints.py)."""

    storage: Storage
    work: str | None
    """Where the job's working directory was uploaded; None: nothing to restore (an empty folder
    is made when it is missing, e.g. the daemon's home as cwd)."""
    checkpoint_dir: str | None
    """AR_CHECKPOINT_DIR of the attempt (a path on every node)."""
    checkpoint: str
    """Where that directory's versions are kept in the store."""


def _stage_in(stage: Stage, cwd: str, node: str) -> None:
    """Restore the working directory (when missing here) and the checkpoint directory from the store."""
    try:
        if not Path(cwd).is_dir():
            if stage.work is None:
                Path(cwd).mkdir(parents=True, exist_ok=True)
            elif not stage.storage.get_dir(stage.work, cwd):
                raise NodeUnfit(f"working directory {cwd} is neither on Ray node {node} nor in the storage "
                                f"{stage.storage.uri} ({stage.work})", 126)
        if stage.checkpoint_dir is not None:
            Path(stage.checkpoint_dir).mkdir(parents=True, exist_ok=True)
            restore(stage.storage, stage.checkpoint, stage.checkpoint_dir)
    except (ComputeError, OSError) as err:  # OSError: making a folder here
        raise NodeUnfit(f"the storage {stage.storage.uri} cannot be used from Ray node {node}: {err}", 126) from None


class NodeAgent:
    """Runs attempts on the node it lives on; every method is keyed by the attempt key."""

    def __init__(self, node: str) -> None:
        self.node = node
        seal_process()  # the attempts it starts (and their secrets) are out of other jobs' reach
        self._runs: dict[str, _Run] = {}
        self._base_env = {k: v for k, v in allowed_env().items() if k not in _DROPPED_ENV}
        self._spool = Path(tempfile.mkdtemp(prefix="autoresearch-spool-"))

    async def run(self, key: str, argv: list[str], env: dict[str, str], cwd: str, log_path: str,
                  stage: Stage | None = None, program_here: bool = False) -> int:
        """Start the attempt and return its exit code (negative: killed by that signal). With `stage`
        (a remote store) its folders are restored first, its output goes to this node's spool (read
        back with `read_log`) and its checkpoint directory is kept there while it runs and when it
        ends. Raises NodeUnfit when this node lacks what the daemon's host has (`program_here`:
        argv[0] resolves there)."""
        run = self._runs.setdefault(key, _Run())
        if not run.started:
            await self._begin(key, run, argv, env, cwd, log_path, stage, program_here)
        assert run.ended is not None
        return await run.ended

    async def run_after(self, key: str, after: str, argv: list[str], env: dict[str, str], cwd: str,
                        log_path: str, stage: Stage | None = None, program_here: bool = False) -> float | None:
        """Start the attempt (as `run`) the moment attempt `after` ends on this node (it takes that
        attempt's GPUs), unless it is recalled or stopped first; answer then: when it started (wall
        clock), or None if it never will. Its end is then `wait`'s answer."""
        run = self._runs.get(key)
        if run is not None:  # recalled (or stopped) before this call arrived
            self._runs.pop(key)
            return None
        run = self._runs[key] = _Run(begun=asyncio.get_running_loop().create_future())
        assert run.begun is not None
        before = self._runs.setdefault(after, _Run())  # its `run` may come second: an async actor's calls may
        if before.ended is None:                       # run out of order (seen while the agent starts)
            before.ended = asyncio.get_running_loop().create_future()
        if not before.ended.done():
            either: list[asyncio.Future[Any]] = [before.ended, run.begun]
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if run.begun.done() or run.stop is not None:  # recalled, or stopped before it started
            self._runs.pop(key, None)
            _settle(run.begun, None)
            return None
        run.begun.set_result(time.time())
        await self._begin(key, run, argv, env, cwd, log_path, stage, program_here)
        return run.begun.result()

    def recall(self, key: str) -> float | None:
        """Take back a staged attempt that has not started: None, it never will. Once it started,
        when it did (it runs on: too late to take back)."""
        run = self._runs.get(key)
        if run is None:  # its `run_after` call has not arrived: it finds this and returns None
            self._runs[key] = _Run(stop=signal.SIGKILL)
            return None
        if run.begun is not None and not run.begun.done():
            run.begun.set_result(None)  # `run_after` wakes, starts nothing and forgets it
        return run.begun.result() if run.begun is not None else None

    def unstage(self) -> list[str]:
        """A new daemon connected (the last one may have died): recall every staged attempt not yet
        started, and SIGKILL those that started with nobody watching their end (their jobs are still
        pending in the daemon's store, so they would run twice). Returns the killed attempts' keys."""
        killed = []
        for key, run in list(self._runs.items()):
            if run.begun is None:
                continue
            if not run.begun.done():
                run.begun.set_result(None)
            elif run.begun.result() is not None and not run.waited:
                self.signal(key, signal.SIGKILL)
                self._runs.pop(key)  # its job's next attempt gets this key: a fresh run, not this one's end
                killed.append(key)
        return killed

    async def _begin(self, key: str, run: _Run, argv: list[str], env: dict[str, str], cwd: str, log_path: str,
                     stage: Stage | None, program_here: bool) -> None:
        """Start the attempt; `run.ended` answers its exit code (or raises NodeUnfit)."""
        run.started = True
        if run.ended is None:
            run.ended = asyncio.get_running_loop().create_future()
        run.tracking = Tracking.of(env, None)
        try:
            if stage is not None:
                await asyncio.to_thread(_stage_in, stage, cwd, self.node)
            if run.stop is not None:  # stopped before it started, as the local backend does
                run.ended.set_result(-run.stop)
                return
            log = self.spool(key) if stage is not None else Path(log_path)
            if stage is not None and stage.checkpoint_dir is not None:
                run.keeper = CheckpointKeeper(stage.storage, stage.checkpoint, stage.checkpoint_dir,
                                              self._spool / "snapshots", log)
            code = self._start(key, run, argv, env, cwd, log, program_here)
        except NodeUnfit as err:
            run.ended.set_exception(err)
            run.ended.exception()  # retrieved: `run` or `wait` raises it to the backend
            return
        if code is not None:
            run.ended.set_result(code)

    def spool(self, key: str) -> Path:
        """This node's copy of a staged attempt's log (the daemon appends what `read_log` gives)."""
        return self._spool / f"{key}.log"

    def read_log(self, key: str, offset: int, limit: int = 1 << 20) -> bytes:
        """Up to `limit` bytes of a staged attempt's log from `offset` (b"" when there is no more yet)."""
        try:
            with open(self.spool(key), "rb") as src:
                src.seek(offset)
                return src.read(limit)
        except FileNotFoundError:
            return b""

    def _start(self, key: str, run: _Run, argv: list[str], env: dict[str, str], cwd: str, log: Path,
               program_here: bool) -> int | None:
        if not Path(cwd).is_dir():
            raise NodeUnfit(f"working directory {cwd} does not exist on Ray node {self.node} (the daemon's host "
                            "has it): share it at the same path, or give the daemon --storage", 126)
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            try:
                proc = subprocess.Popen(
                    argv, cwd=cwd, env={**self._base_env, **env}, stdin=subprocess.DEVNULL, stdout=out,
                    stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
                )
            except OSError as err:
                missing = isinstance(err, FileNotFoundError)
                if missing and program_here:
                    raise NodeUnfit(f"{argv[0]} is not found on Ray node {self.node} (the daemon's host has it): "
                                    "install it there", 127) from None
                out.write(f"[autoresearch] {argv[0]}: {'not found' if missing else err.strerror}"
                          f" (on Ray node {self.node})\n".encode())
                return 127 if missing else 126
        run.pid = proc.pid
        run.watch_fd = _start_watcher(proc.pid)
        if run.keeper is not None:
            run.keeper.start()
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
        if run.keeper is not None:
            run.keeper.finish()
        loop.call_soon_threadsafe(_settle, run.ended, code)

    def signal(self, key: str, signum: int) -> None:
        """Signal the attempt's process group; before it started, keep the stop for `run` (a staged
        attempt then never starts)."""
        run = self._runs.setdefault(key, _Run())
        with run.lock:
            if run.pid is None:
                run.stop = run.stop or signum
                _settle(run.begun, None)
                return
            if not run.reaped:
                _killpg(run.pid, signum)
        if run.tracking is not None:
            run.tracking.signal(signum)

    def status(self, key: str) -> dict[str, Any]:
        """{"state": "unknown" | "running" | "ended", "exit_code": int (ended)}."""
        run = self._runs.get(key)
        if run is None or not run.started or run.ended is None:
            return {"state": "unknown"}
        if not run.ended.done():
            return {"state": "running", "pid": run.pid}
        failed = run.ended.exception()
        return {"state": "ended", "exit_code": failed.code if isinstance(failed, NodeUnfit) else run.ended.result()}

    async def wait(self, key: str) -> int | None:
        """The exit code once the attempt ends; None if this agent never ran it."""
        run = self._runs.get(key)
        if run is None or not run.started or run.ended is None:
            return None
        run.waited = True
        return await run.ended

    def forget(self, key: str) -> None:
        """The daemon recorded the end: drop what is kept about the attempt."""
        self._runs.pop(key, None)
        self.spool(key).unlink(missing_ok=True)

    def ping(self) -> None:
        """The backend's heartbeat (compute/backends/ray_liveness.py): an answer says the agent lives."""

    def free_port(self) -> int:
        """A TCP port free on this node now (MASTER_PORT of a gang whose rank 0 runs here)."""
        return free_port("0.0.0.0")

    def running(self) -> int:
        """Attempts not yet forgotten (running, or ended and not yet recorded)."""
        return sum(1 for r in self._runs.values() if r.started)


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


def _settle(future: asyncio.Future[Any] | None, code: int | None) -> None:
    if future is not None and not future.done():
        future.set_result(code)


def _killpg(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass
