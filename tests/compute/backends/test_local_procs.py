"""The local backend tracks every process of an attempt, also those that left its process group.

Real processes on this host: a cgroup per attempt where the host allows (skipped where it does
not), else the attempt's marker in /proc/PID/environ (`cgroups=False` forces that fallback).
"""

from __future__ import annotations

import secrets

import signal
from pathlib import Path

import pytest

from compute.backends.base import AttemptExit, LaunchRequest
from compute.backends.local import LocalBackend
from compute.records import Node
from compute.testing.jobs import live_pids, wait_until

IGNORE_TERM = "trap '' TERM"


def _backend(tmp_path: Path, cgroups: bool) -> LocalBackend:
    return LocalBackend([Node(name="local", gpus=[0, 1])], tmp_path / "run", cgroups=cgroups)


def _request(tmp_path: Path, key: str, escape: str, then: str) -> LaunchRequest:
    """An attempt that starts the escapees `escape` (each writes its pid to pids/), prints ready, runs `then`."""
    pids = tmp_path / "pids"
    script = f"mkdir -p {pids}\n{escape}\nwhile [ -z \"$(ls {pids})\" ]; do sleep 0.05; done\necho ready\n{then}"
    job_id, number = key.rsplit(".", 1)
    job_id += f"-{secrets.token_hex(4)}"  # the marker scan is host-wide: tests run at once must not share a job id
    key = f"{job_id}.{number}"
    return LaunchRequest(key=key, argv=["sh", "-c", script], env={"AR_JOB_ID": job_id, "AR_ATTEMPT": number},
                         cwd=str(tmp_path), node="local", gpus=(0, 1), log_path=tmp_path / f"{key}.log")


def _setsid(tmp_path: Path, name: str, prefix: str = "") -> str:
    return f"{prefix}setsid sh -c \"{IGNORE_TERM}; echo \\$\\$ > {tmp_path}/pids/{name}.pid; exec sleep 600\" &"


def _ready(request: LaunchRequest) -> None:
    wait_until(lambda: request.log_path.exists() and "ready" in request.log_path.read_text(), what="the escapees")


def _exit(backend: LocalBackend, key: str) -> AttemptExit:
    return wait_until(lambda: backend.poll(key), what=f"{key} to end")


def test_an_escapee_that_cleared_its_environment_is_stopped_through_the_attempts_cgroup(tmp_path):
    backend = _backend(tmp_path, cgroups=True)
    if backend.cgroups is None:
        pytest.skip("this host gives no writable cgroup2 hierarchy")
    request = _request(tmp_path, "job-cg.1", _setsid(tmp_path, "bare", prefix="env -i "), "sleep 600")
    backend.launch(request)
    _ready(request)
    backend.signal(request.key, signal.SIGTERM)
    assert _exit(backend, request.key) == AttemptExit(-signal.SIGTERM)
    assert live_pids(tmp_path / "pids") == []
    backend.release(request.key)
    assert not Path(backend.cgroups, request.key).exists(), "release removes the attempt's cgroup"
    backend.close()


@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroup", "marker"])
def test_a_stop_reaches_setsid_and_daemonized_children(tmp_path, cgroups):
    backend = _backend(tmp_path, cgroups)
    daemonized = f"setsid sh -c \"({IGNORE_TERM}; exec sleep 600) & echo \\$! > {tmp_path}/pids/daemonized.pid\""
    request = _request(tmp_path, "job-stop.1", f"{_setsid(tmp_path, 'setsid')}\n{daemonized}", "sleep 600")
    backend.launch(request)
    _ready(request)
    backend.signal(request.key, signal.SIGTERM)
    assert _exit(backend, request.key) == AttemptExit(-signal.SIGTERM)
    assert live_pids(tmp_path / "pids") == [], "the attempt ended while processes of it still ran"
    backend.release(request.key)
    backend.close()


@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroup", "marker"])
def test_an_attempt_that_exits_ends_only_once_what_it_left_behind_is_gone(tmp_path, cgroups):
    backend = _backend(tmp_path, cgroups)
    request = _request(tmp_path, "job-left.1", _setsid(tmp_path, "server"), "exit 0")
    backend.launch(request)
    assert _exit(backend, request.key) == AttemptExit(0)
    assert live_pids(tmp_path / "pids") == []
    backend.release(request.key)
    backend.close()


@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroup", "marker"])
def test_a_restarted_backend_stops_the_escapees_of_an_attempt_that_ended_meanwhile(tmp_path, cgroups):
    backend = _backend(tmp_path, cgroups)
    gate = tmp_path / "gate"
    request = _request(tmp_path, "job-adopt.1", _setsid(tmp_path, "server"),
                       f"while [ ! -e {gate} ]; do sleep 0.05; done; exit 4")
    handle = backend.launch(request)
    _ready(request)
    backend.close()  # the daemon is gone; the attempt's script ends, its escapee runs on
    gate.touch()
    wait_until(lambda: (tmp_path / "run" / f"{request.key}.exit").exists(), what="the script to end")
    backend = _backend(tmp_path, cgroups)
    assert backend.adopt(request.key, handle) is None, "adopted while a process of it still runs"
    assert _exit(backend, request.key) == AttemptExit(4)
    assert live_pids(tmp_path / "pids") == []
    backend.release(request.key)
    backend.close()


def test_a_subreaper_gets_back_the_daemonized_orphans_of_its_children(tmp_path):
    """Without cgroups the daemon is the child subreaper: an attempt's double-forked process is
    re-parented to it, not to init (a separate Python process here, as the daemon is)."""
    import subprocess
    import sys

    pid_file = tmp_path / "orphan.pid"
    code = (
        "import os, subprocess, sys, time\n"
        "from compute.backends.attempt_procs import become_subreaper, reap\n"
        "assert become_subreaper()\n"
        f"subprocess.run(['sh', '-c', '(sleep 600 & echo $! > {pid_file})'], check=True)\n"
        f"pid = int(open('{pid_file}').read())\n"
        "ppid = int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1])\n"
        "os.kill(pid, 9)\n"
        "while reap({pid}):\n"
        "    time.sleep(0.01)\n"
        "print(ppid == os.getpid())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "True", out.stderr
    assert live_pids(tmp_path) == []
