"""A compute store that lost its state (issue 20 items 5, 10): a truncated store.db, or one that
is not an SQLite file, is refused with the file named and what to do; never recreated empty."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from compute import Client, ComputePaths, Store, StoreLost
from tests.compute.helpers import quick_job


def _home_with_a_job(tmp_path: Path) -> ComputePaths:
    paths = ComputePaths.of(tmp_path / "home")
    client = Client(paths.home, autostart=False)
    client.submit(quick_job(name="kept"))
    client.close()
    return paths


def test_a_truncated_store_is_refused_not_recreated(tmp_path: Path) -> None:
    paths = _home_with_a_job(tmp_path)
    for suffix in ("-wal", "-shm"):
        Path(f"{paths.db}{suffix}").unlink(missing_ok=True)
    paths.db.write_bytes(b"")
    with pytest.raises(StoreLost) as info:
        Store(paths)
    assert str(paths.db) in str(info.value) and "restore store.db from a backup" in str(info.value)
    with sqlite3.connect(paths.db) as db:  # nothing was recreated
        assert db.execute("SELECT count(*) FROM sqlite_master").fetchone() == (0,)
    with pytest.raises(StoreLost):
        Client(paths.home, autostart=False)


def test_a_store_that_is_not_sqlite_is_one_clear_error(tmp_path: Path) -> None:
    paths = _home_with_a_job(tmp_path)
    for suffix in ("-wal", "-shm"):
        Path(f"{paths.db}{suffix}").unlink(missing_ok=True)
    paths.db.write_bytes(b"garbage, not a database " * 200)
    with pytest.raises(StoreLost, match="is not a usable SQLite database .file is not a database"):
        Store(paths)


def test_a_new_home_still_gets_a_store(tmp_path: Path) -> None:
    paths = ComputePaths.of(tmp_path / "fresh")
    Store(paths).close()
    assert paths.db_marker.is_file()
    Store(paths).close()


def test_a_store_truncated_under_the_daemon_stops_it_instead_of_locking_clients_out(start_compute) -> None:
    """Before: the daemon kept its locks on the truncated file and every client waited 30 s for
    `database is locked`. Now it sees the file changed on its next tick, says so and exits."""
    import time

    from compute import JobState, daemon_pid
    from tests.compute.helpers import wait_until

    client = start_compute()
    job = client.submit(quick_job(name="before"))
    [done] = client.wait([job.id], timeout=60)
    assert done.state is JobState.succeeded
    paths = ComputePaths.of(client.home)
    paths.db.write_bytes(b"")  # its -wal and -shm stay, as after `: > store.db`
    wait_until(lambda: daemon_pid(paths) is None, timeout=30, what="the daemon to stop")
    assert "was deleted, truncated or replaced while the daemon had it open" in paths.daemon_log.read_text()
    start = time.monotonic()
    try:  # the daemon's last close wrote its log back: the store opens again (or is refused), at once
        Client(paths.home, autostart=False).close()
    except StoreLost as err:
        assert str(paths.db) in str(err)
    assert time.monotonic() - start < 25, "a client waited out the busy timeout"
