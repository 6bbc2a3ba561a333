"""The local backend: each attempt is a subprocess of this host, in its own process group.

Every attempt runs under a tiny `sh` wrapper that writes its pid to `<key>.pid`, runs
the command, and writes the command's exit status to `<key>.exit`. The wrapper traps
(does not ignore) SIGTERM and SIGINT, so the command keeps default signal dispositions
while the wrapper survives to record the status. Attempts run in a new session, so
they outlive the daemon; after a daemon restart `adopt` finds them again by pid,
checking the process start time (/proc/<pid>/stat) so a reused pid is never mistaken
for the attempt. Exits are noticed at once through pidfds (`wake_fds`).
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compute.backends.base import AttemptExit, LaunchError, LaunchRequest
from compute.records import Node

# $1: pid file, $2: exit file, then the command.
WRAPPER = 'echo $$ > "$1"; e=$2; shift 2; trap : TERM INT; "$@"; rc=$?; echo $rc > "$e"; exit $rc'


def process_start_time(pid: int) -> int | None:
    """The start time of `pid` in clock ticks since boot, or None if no such live process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    if fields[0] == "Z":  # a zombie has ended
        return None
    return int(fields[19])


def decode_status(code: int) -> int:
    """Shell status -> exit code: 128+N (a command killed by signal N) becomes -N."""
    if 128 < code <= 128 + 64:
        return -(code - 128)
    return code


@dataclass
class _Proc:
    pid: int
    start: int | None
    pidfd: int | None
    popen: subprocess.Popen[bytes] | None = None


class LocalBackend:
    """Subprocesses on this host; `nodes` are slices of its GPU slots."""

    name = "local"

    def __init__(self, nodes: list[Node], run_dir: Path, base_env: Mapping[str, str] | None = None) -> None:
        self._nodes = list(nodes)
        self._run_dir = run_dir
        self._base_env = dict(os.environ if base_env is None else base_env)
        self._procs: dict[str, _Proc] = {}
        run_dir.mkdir(parents=True, exist_ok=True)

    def nodes(self) -> list[Node]:
        return list(self._nodes)

    def _files(self, key: str) -> tuple[Path, Path]:
        return self._run_dir / f"{key}.pid", self._run_dir / f"{key}.exit"

    def launch(self, request: LaunchRequest) -> dict[str, Any]:
        pid_file, exit_file = self._files(request.key)
        for stale in (pid_file, exit_file):
            stale.unlink(missing_ok=True)
        if not Path(request.cwd).is_dir():
            raise LaunchError(f"working directory {request.cwd} does not exist")
        request.log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(request.log_path, "ab") as log:
            try:
                popen = subprocess.Popen(
                    ["/bin/sh", "-c", WRAPPER, "sh", str(pid_file), str(exit_file), *request.argv],
                    cwd=request.cwd,
                    env={**self._base_env, **request.env},
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    close_fds=True,
                )
            except OSError as err:
                raise LaunchError(f"could not start {request.argv[0]!r}: {err}") from err
        proc = _Proc(popen.pid, process_start_time(popen.pid), _pidfd(popen.pid), popen)
        self._procs[request.key] = proc
        return {"pid": proc.pid, "pid_start": proc.start}

    def poll(self, key: str) -> AttemptExit | None:
        proc = self._procs[key]
        if proc.popen is not None:
            try:
                ended = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                ended = True  # already reaped
            if ended is None:
                return None
            # The leader is a zombie, so its group id cannot be reused yet: clean up
            # processes the command left behind, then reap the leader.
            _killpg(proc.pid, signal.SIGKILL)
            code = proc.popen.wait()
            return AttemptExit(self._exit_code(key, decode_status(code) if code >= 0 else code))
        if process_start_time(proc.pid) == proc.start and proc.start is not None:
            return None
        return AttemptExit(self._exit_code(key, None))

    def _exit_code(self, key: str, fallback: int | None) -> int | None:
        try:
            text = self._files(key)[1].read_text().strip()
        except OSError:
            return fallback
        return decode_status(int(text)) if text.isdigit() else fallback

    def signal(self, key: str, signum: int) -> None:
        proc = self._procs.get(key)
        if proc is None:
            return
        if proc.popen is None and process_start_time(proc.pid) != proc.start:
            return  # gone, and the pid may belong to someone else now
        _killpg(proc.pid, signum)

    def adopt(self, key: str, handle: dict[str, Any] | None) -> AttemptExit | None:
        pid_file, _ = self._files(key)
        pid = (handle or {}).get("pid")
        if pid is None:
            try:
                pid = int(pid_file.read_text().strip())
            except (OSError, ValueError):
                return AttemptExit(self._exit_code(key, None))
        start = (handle or {}).get("pid_start") or process_start_time(pid)
        if start is None or process_start_time(pid) != start:
            return AttemptExit(self._exit_code(key, None))
        self._procs[key] = _Proc(pid, start, _pidfd(pid))
        return None

    def release(self, key: str) -> None:
        proc = self._procs.pop(key, None)
        if proc is not None and proc.pidfd is not None:
            os.close(proc.pidfd)
        for path in self._files(key):
            path.unlink(missing_ok=True)

    def wake_fds(self) -> list[int]:
        return [p.pidfd for p in self._procs.values() if p.pidfd is not None]

    def close(self) -> None:
        for proc in self._procs.values():
            if proc.pidfd is not None:
                os.close(proc.pidfd)
        self._procs.clear()


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None  # old kernel: exits are then seen at the next tick


def _killpg(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass
