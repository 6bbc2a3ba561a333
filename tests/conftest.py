"""Shared fixtures.

Compute: `compute_home` is a temp AUTORESEARCH_HOME with a running daemon (4 virtual
GPU slots on node `local`, grace 1 s, min runtime 0.2 s), torn down at the end with
every attempt stopped. `start_compute(**DaemonConfig fields)` starts one with other
settings (e.g. `virtual_nodes=2, gpus_per_node=2`) and returns a `Client`.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from compute import Client, ComputeError, ComputePaths, DaemonConfig, Store, start_daemon, stop_daemon
from compute.backends.local import process_start_time
from compute.control import daemon_pid
from tests.fixtures_tracking import experiment_name, tracking  # noqa: F401  (MLflow store, one per session)

FAST_DAEMON = {"gpus": 4, "grace_s": 1.0, "min_runtime_s": 0.2, "tick_s": 0.2}


@pytest.fixture(autouse=True)
def _own_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own AUTORESEARCH_HOME, so no test sees another's campaigns or jobs.

    Fixtures that start a daemon point it at their own home afterwards.
    """
    monkeypatch.setenv("AUTORESEARCH_HOME", str(tmp_path_factory.mktemp("home")))


def _kill_leftovers(home: Path) -> None:
    """SIGKILL attempts still recorded as running (e.g. after a test killed the daemon)."""
    store = Store(ComputePaths.of(home))
    try:
        rows = store.read("SELECT handle FROM attempts WHERE outcome IS NULL AND handle IS NOT NULL")
    finally:
        store.close()
    for row in rows:
        handle = json.loads(row["handle"])
        pid = handle.get("pid")
        if pid and process_start_time(pid) == handle.get("pid_start"):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass


@pytest.fixture
def start_compute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Client]]:
    """Factory: start a daemon on a fresh temp home (sets AUTORESEARCH_HOME) -> Client."""
    started: list[tuple[Path, Client]] = []

    def start(**settings: object) -> Client:
        home = tmp_path / f"arhome{len(started)}"
        monkeypatch.setenv("AUTORESEARCH_HOME", str(home))
        start_daemon(home, DaemonConfig(**{**FAST_DAEMON, **settings}))
        client = Client(home, autostart=False)
        started.append((home, client))
        return client

    yield start
    for home, client in started:
        client.close()
        try:
            stop_daemon(home, stop_jobs=True, wait_s=60)
        except ComputeError:  # hung: never leave it spinning for the rest of the session
            if (pid := daemon_pid(ComputePaths.of(home))) is not None:
                os.kill(pid, signal.SIGKILL)
            raise
        finally:
            _kill_leftovers(home)


@pytest.fixture
def compute_client(start_compute: Callable[..., Client]) -> Client:
    """A Client on a temp home with a running fast daemon (see module docstring)."""
    return start_compute()


@pytest.fixture
def compute_home(compute_client: Client) -> Path:
    """The temp AUTORESEARCH_HOME of `compute_client` (also set in the environment)."""
    return compute_client.home


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist (`-n N --dist loadgroup`) every Ray test runs on one worker, so the
    session starts one Ray cluster, not one per worker; and every container test on one worker,
    so its session's end-of-run check (no `ar-*` container or mount left) sees only its own."""
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        if item.get_closest_marker("ray") or "ray_cluster" in fixtures:
            item.add_marker(pytest.mark.xdist_group("ray"))
        elif "container_runtimes" in fixtures:
            item.add_marker(pytest.mark.xdist_group("containers"))
