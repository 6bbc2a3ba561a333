"""Start, find, wake and stop the per-host daemon.

One daemon per home: it holds an exclusive fcntl lock on `compute/daemon.lock` (which
holds its pid) for as long as it lives; the kernel drops the lock when it dies, even by
SIGKILL. A second daemon finds the lock held and refuses to start.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compute.attempt_logs import read_tail
from compute.clock import Now
from compute.errors import ComputeError, DaemonAlreadyRunning
from compute.heartbeat import last_tick, record_tick
from compute.paths import ComputePaths
from compute.pidlock import holder_pid, try_lock

if TYPE_CHECKING:  # clients only find, wake and spawn the daemon: they never import its machinery
    from compute.daemon_config import DaemonConfig

_LOCK_TRIES_S = 2.0  # a client probing the lock holds it for microseconds
CLUSTER_ENV = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH")
"""What a daemon needs from its environment to reach its cluster, recorded when it is ready
(`paths.daemon_env`) and given to the daemon a client restarts in its place: a runner's shell
without `RAY_AUTH_MODE=token` must not make a daemon that cannot connect."""
TAKES_SUBMISSIONS = "takes_submissions"
"""Key of daemon.json, True: this daemon answers submission requests (compute/submissions.py)."""


def daemon_pid(paths: ComputePaths) -> int | None:
    """The pid of the daemon serving this home, or None if none runs."""
    return holder_pid(paths.lock)


STALE_TICKS = 5
"""A daemon that has not ticked for this many of its `tick_s` (and 10 s at least) is not responding."""
_STALE_MIN_S = 10.0


def daemon_info(paths: ComputePaths) -> dict[str, Any] | None:
    """What the running daemon wrote about itself (pid, config, nodes, `ready`), or None if none holds
    the lock (a daemon still starting has only `pid`, never a killed one's file); with `last_tick_at`
    (wall clock, None before its first tick) and `responding`: False when it has not ticked for
    `STALE_TICKS` ticks (stopped with SIGSTOP, stuck), see `not_responding`."""
    pid = daemon_pid(paths)
    if pid is None:
        return None
    try:
        info = json.loads(paths.daemon_info.read_text())
    except (OSError, ValueError):
        info = {}
    if not isinstance(info, dict) or info.get("pid") != pid:
        info = {}  # a killed daemon's (it could not remove it): the one holding the lock is not ready yet
    last = last_tick(paths)
    tick_s = float((info.get("config") or {}).get("tick_s", 1.0))
    stale = last is not None and Now.read().boot - last[0] > max(_STALE_MIN_S, STALE_TICKS * tick_s)
    return {**info, "pid": pid, "last_tick_at": None if last is None else last[1], "responding": not stale}


def not_responding(info: dict[str, Any] | None) -> str | None:
    """`daemon not responding since T: check pid P` for a daemon (`daemon_info`) that stopped ticking, else None."""
    if info is None or info.get("responding", True):
        return None
    since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(info["last_tick_at"]))
    return f"daemon not responding since {since}: check pid {info['pid']}"


def notify(paths: ComputePaths) -> None:
    """Wake the daemon (best effort: it also wakes on its own every tick): a request just changed
    the store. The clients waiting on jobs (compute/watchers.py) are woken by the daemon once a job's
    state changed (no request changes one itself, but the cancel of a pending job, which wakes them)."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            sock.setblocking(False)
            sock.sendto(b"w", paths.socket_address)
    except OSError:
        pass


PRIVATE_ENV_VAR = "AUTORESEARCH_PRIVATE_ENV"
"""Names (comma-separated) of more variables the daemon must not hold, added to the defaults."""
DEFAULT_PRIVATE_ENV = "OPENAI_API_KEY,ANTHROPIC_API_KEY"


def daemon_environment(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """The environment the daemon starts with: the caller's, less the private variables
    (the defaults, the agent's model keys, plus any named in AUTORESEARCH_PRIVATE_ENV).

    Jobs never inherit the daemon's environment whole: they get its allowlisted part
    (`compute.jobenv`) plus the credentials their spec names in `secret_env`, which are read
    from here, so a variable listed as private is one no job can ask for either.
    """
    names = f"{DEFAULT_PRIVATE_ENV},{environ.get(PRIVATE_ENV_VAR, '')}"
    private = {n.strip() for n in names.split(",") if n.strip()}
    return {k: v for k, v in environ.items() if k not in private}


NOTICE_S = 3.0
"""A starting daemon not serving after this long is reported to `start_daemon`'s `notice` (once)."""


def start_daemon(home: str | os.PathLike[str] | None = None, config: DaemonConfig | None = None,
                 wait_s: float = 30.0, cluster_env: dict[str, str] | None = None,
                 notice: Callable[[str], None] | None = None) -> int:
    """Spawn a detached daemon for `home` and wait until it serves; return its pid.

    `cluster_env`: the `CLUSTER_ENV` variables to start it with instead of this process's (those
    absent from it are unset); None: this process's environment as it is. `notice`: told, once,
    when the daemon is alive but not serving after `NOTICE_S` (what it waits on, where its log is);
    a daemon that exits raises at once, one that is not serving after `wait_s` is stopped and raises."""
    from compute.daemon_config import DaemonConfig

    paths = ComputePaths.of(home)
    config = config or DaemonConfig()
    running = daemon_pid(paths)
    if running is not None:
        raise DaemonAlreadyRunning(already_running_message(paths, running))
    paths.ensure()
    package_root = Path(__file__).resolve().parent.parent  # the folder holding the compute package
    env = daemon_environment(_with_cluster_env(os.environ, cluster_env))
    with open(paths.daemon_log, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "compute", "--home", str(paths.home), "--config", config.model_dump_json()],
            cwd=package_root, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, close_fds=True, env=env,
        )
    started = time.monotonic()
    deadline = started + wait_s
    while time.monotonic() < deadline:
        info = daemon_info(paths)
        if info is not None and info.get("pid") == proc.pid and info.get("ready"):
            return proc.pid
        code = proc.poll()
        if code is not None:
            other = daemon_pid(paths)
            if other is not None:  # another client started one at the same time: fine
                return other
            raise ComputeError(
                f"the compute daemon exited with code {code} while starting; "
                f"last lines of {paths.daemon_log}:\n{read_tail(paths.daemon_log, lines=15).text.rstrip() or '(no log)'}"
            )
        if notice is not None and time.monotonic() - started >= NOTICE_S:
            notice(_not_serving_yet(paths, proc.pid, config, env, time.monotonic() - started, wait_s))
            notice = None
        time.sleep(0.02)
    # Stuck before serving (e.g. a cluster it cannot reach): it holds the lock, so left alone it would
    # pass for a running daemon with every client, and their jobs would wait on it with no word why.
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    raise ComputeError(
        f"the compute daemon did not become ready within {wait_s:g}s and was stopped; last lines of "
        f"{paths.daemon_log}:\n{read_tail(paths.daemon_log, lines=15).text.rstrip() or '(no log)'}"
    )


def _not_serving_yet(paths: ComputePaths, pid: int, config: DaemonConfig, env: dict[str, str], waited: float,
                     wait_s: float) -> str:
    """What `start_daemon` tells its `notice` of a daemon alive but not serving yet."""
    if config.backend != "ray":
        doing = "opening its store and starting its nodes"
    elif config.ray_address in (None, "local"):
        doing = "starting a local Ray instance"
    else:
        doing = (f"connecting to the Ray cluster at {config.ray_address} with RAY_AUTH_MODE="
                 f"{env.get('RAY_AUTH_MODE', '(unset)')}")
    last = read_tail(paths.daemon_log, lines=1).text.strip() or "(empty)"
    return (f"the compute daemon (pid {pid}) is not answering yet after {waited:.0f} s: it is still {doing}; "
            f"it is stopped if it does not answer within {wait_s:g} s. Its log {paths.daemon_log} ends with: {last}")


def ensure_daemon(paths: ComputePaths, notice: Callable[[str], None] | None = None) -> None:
    """Start a daemon if none serves this home: with the config and the cluster's variables
    (`CLUSTER_ENV`) of a daemon that died without cleaning up (killed: its daemon.json and
    daemon.env are still there), else the default config and this process's environment.
    `notice`: see `start_daemon`."""
    if daemon_pid(paths) is None:
        config = _config_of_dead_daemon(paths)
        try:
            start_daemon(paths.home, config, wait_s=120.0 if config and config.backend == "ray" else 30.0,
                         cluster_env=None if config is None else recorded_cluster_env(paths), notice=notice)
        except DaemonAlreadyRunning:
            pass


def record_cluster_env(paths: ComputePaths) -> None:
    """Write this (daemon) process's `CLUSTER_ENV` variables to `paths.daemon_env`, readable by its owner only."""
    values = {k: os.environ[k] for k in CLUSTER_ENV if k in os.environ}
    fd = os.open(paths.daemon_env, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(values, out)


def recorded_cluster_env(paths: ComputePaths) -> dict[str, str] | None:
    """The `CLUSTER_ENV` variables a dead daemon ran with; None when it recorded none (an older version).
    Raises ComputeError when the record exists but cannot be read: a restart would guess."""
    try:
        values = json.loads(paths.daemon_env.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        raise ComputeError(
            f"the compute daemon of {paths.home} died and cannot be restarted as it ran: its recorded cluster "
            f"environment {paths.daemon_env} is unreadable ({err}). Start it yourself with `autoresearch compute up` "
            f"(and the options it had) from a shell with what the cluster needs ({', '.join(CLUSTER_ENV)})"
        ) from None
    if not isinstance(values, dict) or not all(k in CLUSTER_ENV and isinstance(v, str) for k, v in values.items()):
        raise ComputeError(f"{paths.daemon_env} holds {values!r}, not the daemon's {', '.join(CLUSTER_ENV)}: "
                           "remove it and start the daemon with `autoresearch compute up`")
    return values


def _with_cluster_env(environ: Any, cluster_env: dict[str, str] | None) -> dict[str, str]:
    if cluster_env is None:
        return dict(environ)
    return {**{k: v for k, v in environ.items() if k not in CLUSTER_ENV}, **cluster_env}


def _config_of_dead_daemon(paths: ComputePaths) -> DaemonConfig | None:
    from compute.daemon_config import DaemonConfig

    try:
        return DaemonConfig.model_validate(json.loads(paths.daemon_info.read_text())["config"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def stop_daemon(home: str | os.PathLike[str] | None = None, stop_jobs: bool = False, wait_s: float = 120.0) -> int | None:
    """Stop the daemon (SIGTERM; SIGUSR1 with stop_jobs); return its pid, None if none ran.

    Without stop_jobs running attempts keep running and the next daemon adopts them.
    With stop_jobs each attempt gets SIGTERM, its grace, SIGKILL, and its job is requeued.
    """
    paths = ComputePaths.of(home)
    pid = daemon_pid(paths)
    if pid is None:
        return None
    os.kill(pid, signal.SIGUSR1 if stop_jobs else signal.SIGTERM)
    deadline = time.monotonic() + wait_s
    while daemon_pid(paths) is not None:
        if time.monotonic() > deadline:
            raise ComputeError(f"the compute daemon (pid {pid}) did not stop within {wait_s:g}s; kill it with `kill {pid}`")
        time.sleep(0.02)
    return pid


def already_running_message(paths: ComputePaths, pid: int) -> str:
    return (
        f"a compute daemon (pid {pid}) already serves {paths.home}; use it as is, or stop it first with "
        "`autoresearch compute down` to start one with other settings"
    )


def serve_forever(paths: ComputePaths, config: DaemonConfig) -> None:
    """Take the lock, bind the socket, run the daemon until it is told to stop."""
    from compute.backends.choose import make_backend, monitor_probes
    from compute.daemon import Daemon
    from compute.health import FaultInjector, HealthMonitor

    paths.ensure()
    deadline = time.monotonic() + _LOCK_TRIES_S
    while (lock_fd := try_lock(paths.lock)) is None:
        if time.monotonic() > deadline:
            raise DaemonAlreadyRunning(already_running_message(paths, holder_pid(paths.lock) or -1)) from None
        time.sleep(0.05)
    record_tick(paths)  # a previous daemon's last tick is not this one's
    address = paths.socket_address
    if not address.startswith("\0"):
        Path(address).unlink(missing_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    backend = make_backend(paths, config)
    nodes = backend.nodes()
    daemon = Daemon(paths, config, backend,
                    health=HealthMonitor(config.health, faults=FaultInjector(paths.faults),
                                         **monitor_probes(backend, config.health)))
    info = {"pid": os.getpid(), "started_at": time.time(), "backend": backend.name, "config": config.model_dump(),
            "socket": address.replace("\0", "@"), "nodes": [n.model_dump(mode="json") for n in nodes], "ready": True,
            TAKES_SUBMISSIONS: True}
    def ready() -> None:
        record_cluster_env(paths)
        paths.daemon_info.write_text(json.dumps(info, indent=2))

    try:
        daemon.serve(sock, on_ready=ready)
    finally:
        sock.close()
        if not address.startswith("\0"):
            Path(address).unlink(missing_ok=True)
        paths.daemon_info.unlink(missing_ok=True)
        paths.daemon_env.unlink(missing_ok=True)
        os.close(lock_fd)
