"""Keeping the runner's SQLite write-ahead logs short, from a thread of their own.

In WAL mode a commit appends the pages it changed to `<db>-wal`; a checkpoint copies them back
into the database file (and fsyncs it). SQLite runs one inside whichever commit makes the log
pass 1000 pages, and the last connection to close runs one on whatever is left. The runner writes
its graph checkpoints, its ledger and its tracking outbox on its main thread, between a job's end
and the next job's submit, and closes them when the campaign returns: a checkpoint there held the
next launch, or the return, for 10-25 ms. `WalKeeper` runs a passive checkpoint (it never waits
for a lock, and never holds up a reader or a writer) on each file every `every_s`, through
connections of its own, so neither a commit nor the close finds much left to copy.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path


class WalKeeper:
    """`PRAGMA wal_checkpoint(PASSIVE)` on `paths` every `every_s` until `close` (call it before
    the files' own connections close: the last connection to close is the one that tidies up)."""

    def __init__(self, paths: Sequence[Path], every_s: float = 0.5) -> None:
        self.paths = list(paths)
        self.every_s = every_s
        self.checkpoints = 0
        """Passive checkpoints run so far (all files)."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="wal-keeper", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        connections: dict[Path, sqlite3.Connection] = {}
        try:
            while not self._stop.wait(self.every_s):
                for path in self.paths:
                    try:
                        if path not in connections:
                            if not path.is_file():
                                continue  # not made yet: connecting would create it
                            connections[path] = sqlite3.connect(path, check_same_thread=False)
                        connections[path].execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                        self.checkpoints += 1
                    except sqlite3.Error:
                        pass  # locked for a moment, or gone: the next pass, or the close, checkpoints it
        finally:
            for connection in connections.values():
                connection.close()
