"""The local backend: each attempt is a subprocess of this host, in its own process group.

Every attempt runs under a small `sh` script (`run/<key>.sh`) that writes its pid to
`<key>.pid`, sends its output to the attempt's log, runs the command, and writes the
command's exit status to `<key>.exit`. The script traps (does not ignore) SIGTERM and
SIGINT, so the command keeps default signal dispositions while the script survives to
record the status; a stop that lands before the command started skips it (status 143).
Attempts run in a new session, so they outlive the daemon; after a daemon restart `adopt` finds them again by pid, checking the process start time
(/proc/<pid>/stat) so a reused pid is never mistaken for the attempt. Exits are noticed
at once through pidfds (`wake_fds`).

Every process of an attempt is tracked, also one that left its process group (`setsid`, a
daemonizing double fork): by a cgroup per attempt where this host allows, and by the attempt's
marker in /proc/PID/environ (compute/backends/attempt_procs.py; `<key>.track` says how, for
adoption). `signal` reaches all of them; once the script has ended, `poll` SIGKILLs what it left
behind and answers None until the last of it is gone, so the daemon frees the attempt's GPUs
only then.

Launch latency: starting `sh` and then forking the command costs two new processes,
which a loaded machine schedules slowly. So while idle the daemon calls `warm()`, which
starts one spare `sh` that blocks reading a script path from its stdin; `launch` then
hands the script to the spare, and only the command's own fork remains on the path.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import compute.container_ops as container_ops
from compute.backends.attempt_procs import Tracking, cgroup_base, new_cgroup, reap
from compute.backends.base import AttemptExit, LaunchError, LaunchRequest
from compute.container import ContainerRun, ContainerRuntime
from compute.jobenv import allowed_env
from compute.records import Node

SPARE = 'read -r script && . "$script"'
"""A warm spare: waits for the path of an attempt script on stdin, then runs it."""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def attempt_script(argv: list[str], env: dict[str, str], cwd: str, log: Path, pid_file: Path,
                   exit_file: Path, cgroup: str | None = None) -> str:
    """The sh script that runs one attempt and records its pid and exit status; with a `cgroup`, it
    first moves itself there, so every process the command starts stays in it."""
    q = shlex.quote
    enter = [f"{{ echo $$ > {q(cgroup + '/cgroup.procs')}; }} 2>/dev/null"] if cgroup else []
    exports = [f"export {k}={q(v)}" for k, v in env.items() if _NAME.fullmatch(k)]
    odd = [f"{k}={v}" for k, v in env.items() if not _NAME.fullmatch(k)]
    if odd:  # names sh cannot export go through env(1)
        argv = ["env", "--", *odd, *argv]
    return "\n".join([
        *enter,
        f"echo $$ > {q(str(pid_file))}",
        f"cd {q(cwd)} || exit 126",
        f"exec </dev/null >>{q(str(log))} 2>&1",
        *exports,
        "trap 'stopped=1' TERM INT",
        f"set -- {shlex.join(argv)}",
        # A stop that arrived before the command started ends the attempt as SIGTERM would.
        'if [ -n "$stopped" ]; then rc=143; else "$@"; rc=$?; fi',
        f"echo $rc > {q(str(exit_file))}",
        "exit $rc",
    ]) + "\n"


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
    pid: int | None
    """The attempt script's pid; None for a container adopted after its client was gone."""
    start: int | None
    pidfd: int | None
    popen: subprocess.Popen[bytes] | None = None
    container: ContainerRun | None = None
    stopper: subprocess.Popen[bytes] | None = None
    """A running `RUNTIME stop -t GRACE NAME`, reaped on the next poll or release."""
    tracking: Tracking | None = None
    """How every process of the attempt is found (compute/backends/attempt_procs.py)."""
    leader_code: int | None = None
    leader_gone: bool = False
    """The attempt script ended (`leader_code`: its status, when reaped here); the attempt ends
    once no process of it is left."""
    seen: set[int] = field(default_factory=set)
    """Processes of the attempt killed after its script ended: reaped here if they were re-parented to us."""
    left_fds: list[int] = field(default_factory=list)
    """pidfds of those processes, so their end wakes the daemon."""


class LocalBackend:
    """Subprocesses on this host; `nodes` are slices of its GPU slots."""

    name = "local"

    def __init__(self, nodes: list[Node], run_dir: Path, base_env: Mapping[str, str] | None = None,
                 cgroups: bool = True) -> None:
        self._nodes = list(nodes)
        self._run_dir = run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        self.cgroups = cgroup_base(run_dir) if cgroups else None
        """Where attempts' cgroups go; None: none here (or `cgroups=False`), processes are found by marker only."""
        self._base_env = allowed_env() if base_env is None else dict(base_env)
        """What every attempt inherits: the allowlisted part of the daemon's environment (compute.jobenv)."""
        self._procs: dict[str, _Proc] = {}
        self._spare: subprocess.Popen[bytes] | None = None

    def nodes(self) -> list[Node]:
        return list(self._nodes)

    def master_address(self, node: str) -> tuple[str, int]:
        """Every node of this backend is this host: loopback and a port free here now."""
        return "127.0.0.1", free_port()

    def _files(self, key: str) -> tuple[Path, Path]:
        return self._run_dir / f"{key}.pid", self._run_dir / f"{key}.exit"

    def warm(self) -> None:
        """Start a spare `sh` for the next launch, unless one waits already."""
        if self._spare is not None and self._spare.poll() is None:
            return
        self._spare = subprocess.Popen(
            ["/bin/sh", "-c", SPARE], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env=self._base_env, cwd="/", start_new_session=True, close_fds=True,
        )

    def launch(self, request: LaunchRequest) -> dict[str, Any]:
        pid_file, exit_file = self._files(request.key)
        for stale in (pid_file, exit_file):
            stale.unlink(missing_ok=True)
        if not Path(request.cwd).is_dir():
            raise LaunchError(f"working directory {request.cwd} does not exist")
        request.log_path.parent.mkdir(parents=True, exist_ok=True)
        request.log_path.touch()
        script = self._run_dir / f"{request.key}.sh"
        script.touch(mode=0o600)  # it holds the job's env, credentials included: owner-only
        script.chmod(0o600)
        tracking = Tracking.of(request.env, new_cgroup(self.cgroups, request.key))
        self._track_file(request.key).write_text(tracking.to_json())
        script.write_text(attempt_script(request.argv, request.env, request.cwd, request.log_path, pid_file, exit_file,
                                         tracking.cgroup))
        run = request.container
        handle: dict[str, Any] = {}
        if run is not None:  # written first: a restart finds the container from the key alone
            handle["container"] = {"runtime": run.runtime.value, "name": run.name, "grace_s": run.grace_s}
            self._container_file(request.key).write_text(json.dumps(handle["container"]))
        popen = self._hand_to_spare(script) or self._start_sh(script)
        proc = _Proc(popen.pid, process_start_time(popen.pid), _pidfd(popen.pid), popen, run, tracking=tracking)
        self._procs[request.key] = proc
        return {"pid": proc.pid, "pid_start": proc.start, **handle}

    def _container_file(self, key: str) -> Path:
        return self._run_dir / f"{key}.container"

    def _track_file(self, key: str) -> Path:
        return self._run_dir / f"{key}.track"

    def _tracking(self, key: str) -> Tracking | None:
        try:
            return Tracking.from_json(self._track_file(key).read_text())
        except (OSError, ValueError, KeyError):
            return None  # launched by a release without tracking: its process group only

    def _container(self, key: str, handle: dict[str, Any] | None) -> ContainerRun | None:
        data = (handle or {}).get("container")
        if data is None:
            try:
                data = json.loads(self._container_file(key).read_text())
            except (OSError, ValueError):
                return None
        return ContainerRun(ContainerRuntime(data["runtime"]), data["name"], float(data["grace_s"]))

    def _hand_to_spare(self, script: Path) -> subprocess.Popen[bytes] | None:
        spare, self._spare = self._spare, None
        if spare is None or spare.stdin is None:
            return None
        try:
            spare.stdin.write(f"{script}\n".encode())
            spare.stdin.close()
        except OSError:  # the spare died: reap it and start fresh
            spare.kill()
            spare.wait()
            return None
        return spare

    def _start_sh(self, script: Path) -> subprocess.Popen[bytes]:
        try:
            return subprocess.Popen(
                ["/bin/sh", str(script)], env=self._base_env, cwd="/", stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
            )
        except OSError as err:
            raise LaunchError(f"could not start /bin/sh for the attempt: {err}", infra=True) from err

    def poll(self, key: str) -> AttemptExit | None:
        proc = self._procs[key]
        if proc.stopper is not None and proc.stopper.poll() is not None:
            proc.stopper = None
        if proc.pid is None:  # a container whose client was gone at adoption
            assert proc.container is not None
            found = container_ops.state(proc.container)
            if found is not None and found.running:
                return None
            return AttemptExit(self._exit_code(key, _container_code(found)))
        if not proc.leader_gone and proc.popen is not None:
            try:
                ended = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
            except ChildProcessError:
                ended = True  # already reaped
            if not ended:
                return None
            # The leader is a zombie, so its group id cannot be reused yet: clean up
            # processes the command left behind, then reap the leader.
            _killpg(proc.pid, signal.SIGKILL)
            code = proc.popen.wait()
            proc.leader_code = decode_status(code) if code >= 0 else code
            self._leader_ended(proc)
        elif not proc.leader_gone:
            if process_start_time(proc.pid) == proc.start and proc.start is not None:
                return None
            self._leader_ended(proc)
        if self._left_behind(proc):
            return None  # the GPUs stay taken until the last process of the attempt is gone
        return AttemptExit(self._exit_code(key, proc.leader_code))

    def _leader_ended(self, proc: _Proc) -> None:
        proc.leader_gone, proc.popen = True, None
        if proc.pidfd is not None:  # readable from now on: it would wake the daemon in a loop
            os.close(proc.pidfd)
            proc.pidfd = None

    def _left_behind(self, proc: _Proc) -> bool:
        """SIGKILL whatever the attempt's script left running (a `setsid` or daemonized child);
        True while some of it lives."""
        for fd in proc.left_fds:
            os.close(fd)
        proc.left_fds = []
        proc.seen = reap(proc.seen)
        if proc.tracking is None:
            return False
        left = proc.tracking.signal(signal.SIGKILL)
        proc.seen |= left
        proc.left_fds = [opened for pid in left if (opened := _pidfd(pid)) is not None]
        return bool(left)

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
        if proc.container is not None:  # the client's signals do not reach the container
            if signum == signal.SIGTERM:
                if proc.stopper is None:
                    proc.stopper = container_ops.stop(proc.container)
                return
            if signum == signal.SIGKILL:
                container_ops.kill(proc.container)
        if proc.tracking is not None:  # those that left its process group too
            proc.seen |= proc.tracking.signal(signum, exclude=frozenset({proc.pid} if proc.pid else ()))
        if proc.pid is None or proc.leader_gone or (proc.popen is None and process_start_time(proc.pid) != proc.start):
            return  # gone, and the pid may belong to someone else now
        _killpg(proc.pid, signum)

    def adopt(self, key: str, handle: dict[str, Any] | None) -> AttemptExit | None:
        run = self._container(key, handle)
        pid = (handle or {}).get("pid")
        if pid is None:
            try:
                pid = int(self._files(key)[0].read_text().strip())
            except (OSError, ValueError):
                pid = None
        start = None if pid is None else (handle or {}).get("pid_start") or process_start_time(pid)
        tracking = self._tracking(key)
        if pid is not None and start is not None and process_start_time(pid) == start:
            self._procs[key] = _Proc(pid, start, _pidfd(pid), container=run, tracking=tracking)
            return None
        if run is None:
            proc = _Proc(pid, start, None, tracking=tracking, leader_gone=True)
            if self._left_behind(proc):  # its script ended while no daemon watched; its escapees did not
                self._procs[key] = proc
                return None
            for fd in proc.left_fds:
                os.close(fd)
            return AttemptExit(self._exit_code(key, None))
        found = container_ops.state(run)  # the client is gone: the container may live on
        if found is not None and found.running:
            self._procs[key] = _Proc(None, None, None, container=run)
            return None
        self._procs[key] = _Proc(None, None, None, container=run)  # so release removes it
        return AttemptExit(self._exit_code(key, _container_code(found)))

    def release(self, key: str) -> None:
        proc = self._procs.pop(key, None)
        run = proc.container if proc is not None else self._container(key, None)
        if proc is not None:
            for fd in [proc.pidfd, *proc.left_fds]:
                if fd is not None:
                    os.close(fd)
            if proc.stopper is not None:
                proc.stopper.wait()
        if run is not None:
            container_ops.remove(run)
        tracking = proc.tracking if proc is not None else self._tracking(key)
        if tracking is not None:
            tracking.remove()
        for path in (*self._files(key), self._run_dir / f"{key}.sh", self._container_file(key), self._track_file(key)):
            path.unlink(missing_ok=True)

    def wake_fds(self) -> list[int]:
        return [fd for p in self._procs.values() for fd in [p.pidfd, *p.left_fds] if fd is not None]

    def close(self) -> None:
        if self._spare is not None and self._spare.stdin is not None:
            self._spare.stdin.close()  # EOF: the spare exits
            self._spare.wait()
            self._spare = None
        for proc in self._procs.values():
            for fd in [proc.pidfd, *proc.left_fds]:
                if fd is not None:
                    os.close(fd)
        self._procs.clear()
        if self.cgroups is not None:  # removed once no attempt's cgroup is left in it
            with contextlib.suppress(OSError):
                self.cgroups.rmdir()


def _container_code(found: container_ops.ContainerState | None) -> int | None:
    """A container's exit code as an attempt's (137 -> -9), or None when unknown."""
    if found is None or found.exit_code is None:
        return None
    return decode_status(found.exit_code)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on now (the kernel's pick; another process may take it later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


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
