"""The store opened for a read with sqlite3 (`compute.reads`), made or upgraded first where needed."""

from __future__ import annotations

import sqlite3

from compute.paths import ComputePaths
from compute.reads import open_store


def store_for_reading(paths: ComputePaths) -> sqlite3.Connection:
    """`open_store`, after `compute.Store` created or upgraded the store where it is not there yet or
    is older (it refuses a lost one, with its message)."""
    conn = open_store(paths)
    if conn is None:
        from compute.store import Store

        Store(paths).close()
        conn = open_store(paths)
        if conn is None:
            raise sqlite3.DatabaseError(f"the compute store {paths.db} cannot be opened for reading")
    return conn
