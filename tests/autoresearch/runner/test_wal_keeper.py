"""`WalKeeper`: passive checkpoints of the runner's SQLite files from its own thread."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

from autoresearch.runner.wal_keeper import WalKeeper


def _wal_db(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("CREATE TABLE t (n INTEGER, blob TEXT)")
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the table is in the database file
    return connection


def _rows_in_database_file_alone(path: Path, tmp_path: Path) -> int:
    """The rows a copy of the database file holds without its `-wal` (what checkpoints copied in)."""
    copy = tmp_path / "copy.db"
    shutil.copyfile(path, copy)
    with sqlite3.connect(copy) as connection:
        return int(connection.execute("SELECT count(*) FROM t").fetchone()[0])


def _until(predicate, timeout_s: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_committed_pages_reach_the_database_file_while_the_writer_keeps_its_connection(tmp_path: Path) -> None:
    path = tmp_path / "graph.db"
    writer = _wal_db(path)
    for n in range(50):
        writer.execute("INSERT INTO t VALUES (?, ?)", (n, "x" * 1000))
    assert _rows_in_database_file_alone(path, tmp_path) == 0  # all still in the -wal (< 1000 pages)
    keeper = WalKeeper([path], every_s=0.01)
    try:
        _until(lambda: keeper.checkpoints >= 2)
    finally:
        keeper.close()
    assert _rows_in_database_file_alone(path, tmp_path) == 50
    writer.execute("INSERT INTO t VALUES (50, 'after')")  # the writer's connection is untouched
    assert writer.execute("SELECT count(*) FROM t").fetchone()[0] == 51
    writer.close()


def test_a_file_not_made_yet_is_left_alone_until_it_exists(tmp_path: Path) -> None:
    later = tmp_path / "outbox.db"
    keeper = WalKeeper([later], every_s=0.01)
    try:
        time.sleep(0.1)
        assert not later.exists() and keeper.checkpoints == 0
        writer = _wal_db(later)
        writer.execute("INSERT INTO t VALUES (1, 'x')")
        _until(lambda: keeper.checkpoints >= 1)
        writer.close()
    finally:
        keeper.close()
    assert not keeper._thread.is_alive()
