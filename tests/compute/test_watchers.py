"""Waiting clients are woken when jobs change (compute/watchers.py), not found by polling: real
daemons, real sockets, real processes killed with SIGKILL.

The waits below run with the fallback look (and the daemon check) pushed far past their timeout,
so a wait that returns well before its timeout was woken (the change it returns happens within a
second); one that was not would sleep to its timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import compute.client
from compute import Client, JobState
from compute.errors import JobNotFound
from compute.store import Store
from compute.paths import ComputePaths
from compute.watchers import Watcher, wake_watchers
from tests.compute.helpers import gate_job, wait_state

REPO = Path(__file__).resolve().parents[2]
NEVER = 600.0
WAIT = 60.0


@pytest.fixture
def no_fallback_look(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compute.client, "_WATCHED_LOOK_S", NEVER)
    monkeypatch.setattr(compute.client, "_DAEMON_CHECK_S", NEVER)


def test_a_job_that_ends_wakes_its_waiter(compute_client: Client, tmp_path: Path, no_fallback_look: None) -> None:
    gate = tmp_path / "open"
    job = compute_client.submit(gate_job(gate))
    wait_state(compute_client, job.id, JobState.running)
    since = {job.id: JobState.running.value}
    compute_client.wait_for_change([job.id], since, timeout=1.0)  # its watcher is made and idle
    threading.Timer(0.3, gate.touch).start()

    began = time.monotonic()
    changed = compute_client.wait_for_change([job.id], since, timeout=WAIT)

    assert [j.state for j in changed] == [JobState.succeeded]
    assert time.monotonic() - began < WAIT / 2, "the wait was not woken: it slept to its timeout"
    assert compute_client.wait(job.id, timeout=60)[0].state is JobState.succeeded


def test_a_pending_job_cancelled_by_another_client_wakes_its_waiter(
    start_compute: object, tmp_path: Path, no_fallback_look: None
) -> None:
    client = start_compute(gpus=1)  # type: ignore[operator]
    holder = client.submit(gate_job(tmp_path / "never", resources={"gpus": 1}))
    wait_state(client, holder.id, JobState.running)
    waiting = client.submit(gate_job(tmp_path / "never", resources={"gpus": 1}))
    got: list[list[object]] = []
    waiter = threading.Thread(target=lambda: got.append(client.wait_for_change([waiting.id], timeout=WAIT)))
    waiter.start()
    with Client(client.home, autostart=False) as other:
        time.sleep(0.3)
        began = time.monotonic()
        other.cancel(waiting.id, "not needed")
    waiter.join(WAIT + 30)
    took = time.monotonic() - began
    client.cancel(holder.id)

    assert got and [j.state for j in got[0]] == [JobState.cancelled]  # type: ignore[attr-defined]
    assert took < WAIT / 2, "the wait was not woken: it slept to its timeout"



def test_waiting_on_many_jobs_reads_each_whole_job_once_not_at_every_change(
    start_compute: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Client.wait` is woken by every start and end; at each it looks only at the states of the jobs
    not yet final, and reads whole jobs (attempts, events) once, at the end. Re-reading all N jobs at
    each of the ~2N changes made a wait on 200 jobs the busiest process on the machine (1.2 s of CPU
    against the daemon's 0.6 s, benchmarks/ray_bench.py)."""
    client = start_compute(gpus=2)  # type: ignore[operator]
    gate = tmp_path / "open"
    jobs = [client.submit(gate_job(gate, resources={"gpus": 1})) for _ in range(6)]
    reads: list[int] = []
    real = Store.get_jobs
    monkeypatch.setattr(Store, "get_jobs", lambda self, ids: reads.append(len(ids)) or real(self, ids))
    threading.Timer(0.5, gate.touch).start()

    done = client.wait([j.id for j in jobs], timeout=WAIT)

    assert [j.state for j in done] == [JobState.succeeded] * 6
    assert reads == [6], f"whole jobs read {len(reads)} times while waiting: {reads}"
    with pytest.raises(JobNotFound, match="no-such-job"):  # an unknown id is said at once, not after the wait
        client.wait([jobs[0].id, "no-such-job"], timeout=WAIT)


_WATCH_AND_DIE = textwrap.dedent("""
    import os, signal, sys
    from compute.paths import ComputePaths
    from compute.watchers import Watcher
    watcher = Watcher(ComputePaths.of(sys.argv[1]))
    print(watcher._marker, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


@pytest.fixture
def short_home() -> Iterator[Path]:
    """A home whose watcher sockets fit a socket path (pytest's temp dirs are too deep)."""
    with tempfile.TemporaryDirectory(prefix="arw-", dir="/tmp") as home:
        yield Path(home)


def test_the_watcher_of_a_killed_process_is_removed_and_a_live_one_is_woken(short_home: Path) -> None:
    paths = ComputePaths.of(short_home)
    done = subprocess.run([sys.executable, "-c", _WATCH_AND_DIE, str(paths.home)], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)  # fmt: skip
    assert done.returncode == -signal.SIGKILL
    dead = Path(done.stdout.strip())
    assert dead.is_file() and dead.with_name(dead.name + ".sock").exists()
    live = Watcher(paths)
    try:
        assert not live.wait(0.05)
        wake_watchers(paths)
        assert live.wait(30)
        assert not live.wait(0.05), "one wake-up was drained, not kept"
        assert not dead.exists() and not dead.with_name(dead.name + ".sock").exists()
        assert sorted(p.name for p in paths.watchers.iterdir()) == sorted([live._marker.name, live._marker.name + ".sock"])
    finally:
        live.close()
    assert list(paths.watchers.iterdir()) == []


def test_a_home_too_deep_for_a_socket_path_uses_abstract_sockets(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["a-rather-long-directory-name"] * 5)
    paths = ComputePaths.of(deep)
    watcher = Watcher(paths)
    try:
        assert watcher._address.startswith("\0autoresearch-watch-")
        assert [p.name for p in paths.watchers.iterdir()] == [watcher._marker.name]
        wake_watchers(paths)
        assert watcher.wait(30)
    finally:
        watcher.close()
    assert list(paths.watchers.iterdir()) == []
