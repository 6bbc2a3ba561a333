"""`compute.reads.held_slots` and `slot_counts`: the one place GPU slots are counted, for the
sqlite3 reads (`compute status|nodes`) and the typed `compute.nodes.slot_usage` alike."""

from __future__ import annotations

import json
import sqlite3

from compute.nodes import slot_usage
from compute.reads import HELD_SQL, held_slots, slot_counts
from compute.records import Node


def _attempts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.execute("CREATE TABLE attempts (node TEXT, gpus TEXT, members TEXT, outcome TEXT, started_at REAL)")
    gang = [{"node": "a", "gpus": [0, 1], "log_path": "x.r0"}, {"node": "b", "gpus": [0, 1], "log_path": "x.r1"}]
    conn.executemany("INSERT INTO attempts VALUES (?, ?, ?, ?, ?)", [
        ("a", "[2]", "[]", None, 1.0),                    # one slot on a
        ("a", "[0, 1]", json.dumps(gang), None, 2.0),     # a gang: two slots on a and two on b
        ("b", "[3]", "[]", "succeeded", 0.5),             # ended: holds nothing
    ])  # fmt: skip
    return conn


def test_a_gang_holds_slots_on_each_of_its_nodes_and_an_ended_attempt_none() -> None:
    held = held_slots(_attempts().execute(HELD_SQL))
    assert held == [("a", [2]), ("a", [0, 1]), ("b", [0, 1])]
    nodes = [Node(name="a", gpus=[0, 1, 2, 3]), Node(name="b", gpus=[0, 1, 2, 3], state="cordoned")]
    rows = slot_counts([n.model_dump(mode="json") for n in nodes], held)
    assert [(r["name"], r["gpus_used"], r["gpus_free"], r["running"]) for r in rows] == [("a", 3, 1, 2), ("b", 2, 0, 1)]
    assert [s.model_dump(mode="json") for s in slot_usage(nodes, held)] == rows  # the typed records: the same
