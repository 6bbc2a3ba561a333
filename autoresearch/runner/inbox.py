"""The steering inbox of a campaign: typed messages people (chat, CLI) post to a runner.

A SQLite table in `<campaign dir>/inbox.db` (WAL), so any process may append while the
runner reads. The runner drains it at each replan: it applies the kinds it knows and marks
them handled with an outcome; messages of other kinds stay pending for later handlers.

    post("digits-mlp", "pause", author="alice")
    post("digits-mlp", "note", {"text": "try smaller lr"})
"""

from __future__ import annotations

import enum
import json
import os
import re
import sqlite3
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from autoresearch.campaign import campaign_dir, campaigns_root

_SCHEMA = """
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    author TEXT NOT NULL,
    kind TEXT NOT NULL,
    payload TEXT NOT NULL,
    handled_at REAL,
    outcome TEXT
)
"""
_KIND = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


class SteeringKind(str, enum.Enum):
    """The kinds the runner itself applies. Others (budget, space, try ...) wait for their handlers."""

    pause = "pause"
    """No new trials; running ones finish; the campaign waits for resume or stop."""
    resume = "resume"
    """Back to proposing after a pause."""
    stop = "stop"
    """Cancel running trials' jobs; the campaign ends as stopped."""
    note = "note"
    """payload {"text": ...}: appended to the research log and shown to the policy."""


class InboxError(Exception):
    """A message cannot be posted or read; the message says why and what to do."""


class SteeringMessage(BaseModel):
    """One message in a campaign's inbox."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    id: int
    """Increasing per campaign: the order messages are applied in."""
    ts: float
    """Unix time it was posted."""
    author: str
    """Who posted it (`cli`, `chat`, a user name ...)."""
    kind: str
    """A `SteeringKind` value, or a kind a later handler knows."""
    payload: dict[str, Any] = Field(default_factory=dict)
    """Kind-specific content (`text` for a note)."""
    handled_at: float | None = None
    """When the runner applied it; None while pending."""
    outcome: str | None = None
    """What the runner did with it."""


class Inbox:
    """The inbox of the campaign whose state folder is `folder`."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "inbox.db"
        self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def post(self, kind: str, payload: dict[str, Any] | None = None, author: str = "cli") -> SteeringMessage:
        """Append a message; returns it with its id."""
        if not _KIND.match(kind):
            known = ", ".join(k.value for k in SteeringKind)
            raise InboxError(f"message kind {kind!r} must be a lower-case word (letters, digits, _); known: {known}")
        if kind == SteeringKind.note.value and not str((payload or {}).get("text", "")).strip():
            raise InboxError('a note needs payload {"text": "..."} with the text to add to the research log')
        body = json.dumps(payload or {})
        cursor = self._db.execute(
            "INSERT INTO messages (ts, author, kind, payload) VALUES (?, ?, ?, ?)", (time.time(), author, kind, body)
        )
        return self.get(int(cursor.lastrowid or 0))

    def get(self, message_id: int) -> SteeringMessage:
        rows = self._db.execute("SELECT * FROM messages WHERE id = ?", (message_id,)).fetchall()
        if not rows:
            raise InboxError(f"inbox {self.path} has no message {message_id}")
        return _message(rows[0])

    def messages(self, *, pending_only: bool = False, since_id: int = 0) -> list[SteeringMessage]:
        """Messages after `since_id`, oldest first (only unhandled ones with `pending_only`)."""
        query = "SELECT * FROM messages WHERE id > ?" + (" AND handled_at IS NULL" if pending_only else "")
        return [_message(row) for row in self._db.execute(query + " ORDER BY id", (since_id,))]

    def pending_count(self, kinds: set[str] | None = None) -> int:
        """Unhandled messages (of `kinds`, when given)."""
        rows = self._db.execute("SELECT kind FROM messages WHERE handled_at IS NULL").fetchall()
        return sum(kinds is None or row["kind"] in kinds for row in rows)

    def mark_handled(self, message_id: int, outcome: str) -> None:
        """Record that the message was applied (a message is handled once)."""
        self._db.execute(
            "UPDATE messages SET handled_at = ?, outcome = ? WHERE id = ? AND handled_at IS NULL",
            (time.time(), outcome, message_id),
        )


def _message(row: sqlite3.Row) -> SteeringMessage:
    return SteeringMessage(
        id=row["id"],
        ts=row["ts"],
        author=row["author"],
        kind=row["kind"],
        payload=json.loads(row["payload"]),
        handled_at=row["handled_at"],
        outcome=row["outcome"],
    )


def open_inbox(name: str, home: str | os.PathLike[str] | None = None) -> Inbox:
    """The inbox of an existing campaign; raises `InboxError` naming the known ones otherwise."""
    folder = campaign_dir(name, home)
    if not (folder / "optuna.db").is_file():
        root = campaigns_root(home)
        known = sorted(p.parent.name for p in root.glob("*/optuna.db"))
        raise InboxError(
            f"no campaign named {name!r} in {root}; known campaigns: {', '.join(known) or 'none'}. "
            f"Start one with `autoresearch run campaign.yaml` (or set AUTORESEARCH_HOME)."
        )
    return Inbox(folder)


def post(
    name: str,
    kind: str,
    payload: dict[str, Any] | None = None,
    author: str = "cli",
    home: str | os.PathLike[str] | None = None,
) -> SteeringMessage:
    """Post one message to campaign `name`'s inbox; its runner applies it at the next replan."""
    inbox = open_inbox(name, home)
    try:
        return inbox.post(kind, payload, author)
    finally:
        inbox.close()


def read_messages(
    name: str, *, pending_only: bool = False, since_id: int = 0, home: str | os.PathLike[str] | None = None
) -> list[SteeringMessage]:
    """Campaign `name`'s messages after `since_id`, oldest first."""
    inbox = open_inbox(name, home)
    try:
        return inbox.messages(pending_only=pending_only, since_id=since_id)
    finally:
        inbox.close()
