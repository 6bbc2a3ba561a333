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
