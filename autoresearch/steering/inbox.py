"""The steering inbox of a campaign: the commands people (chat, CLI, API, nightly) post to a runner.

A SQLite table in the campaign's `inbox.db` (WAL), so any process may append while the runner
reads. A row is (id, ts, author, kind, payload JSON, handled_at, outcome), the format of older
versions: files written before still read. A command is validated (`parse_command`) when it is
posted, and again when a row is read; a row that no longer validates (an old kind) is kept
pending, never applied, with `problem` saying why.

    post("digits-mlp", Pause(), author="alice")
    post("digits-mlp", Note(text="try smaller lr"))
"""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Any

from pydantic import BaseModel, ConfigDict

from autoresearch.campaign import CampaignPaths, LedgerError, campaigns_root, known_campaigns
from autoresearch.campaign.paths import Home
from autoresearch.steering.commands import Command, CommandError, parse_command

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
    """Who posted it (`cli`, `chat`, `nightly`, a user name ...)."""
    kind: str
    """The command's kind as stored (also for a row that no longer validates)."""
    command: Command | None
    """The command; None for a row this version cannot read (see `problem`)."""
    problem: str = ""
    """Why `command` is None."""
    handled_at: float | None = None
    """When the runner applied it; None while pending."""
    outcome: str | None = None
    """What the runner did with it."""


class Inbox:
    """The inbox of the campaign whose folder is `paths` (created if absent)."""

    def __init__(self, paths: CampaignPaths) -> None:
        paths.root.mkdir(parents=True, exist_ok=True)
        self.path = paths.inbox_db
        self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if "locked" in str(exc):
                raise
            raise InboxError(
                f"the steering inbox {self.path} is not a usable SQLite database ({exc}). Move it away (its unread "
                "messages are lost; a new inbox is made) or restore it from a backup, then try again."
            ) from None

    def close(self) -> None:
        self._db.close()

    def post(self, command: Command, author: str = "cli") -> SteeringMessage:
        """Append a command; returns its message with its id."""
        cursor = self._db.execute(
            "INSERT INTO messages (ts, author, kind, payload) VALUES (?, ?, ?, ?)",
            (time.time(), author, command.kind, json.dumps(command.payload())),
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
    command: Command | None = None
    problem = ""
    try:
        payload: Any = json.loads(row["payload"])
        command = parse_command(row["kind"], payload if isinstance(payload, dict) else {})
    except (CommandError, ValueError) as exc:
        problem = str(exc)
    return SteeringMessage(
        id=row["id"], ts=row["ts"], author=row["author"], kind=row["kind"], command=command, problem=problem,
        handled_at=row["handled_at"], outcome=row["outcome"],
    )  # fmt: skip


def open_inbox(name: str, home: Home = None) -> Inbox:
    """The inbox of an existing campaign; raises `InboxError` naming the known ones otherwise."""
    try:
        paths = CampaignPaths.of(name, home)
    except LedgerError as exc:  # not a campaign name
        raise InboxError(str(exc)) from None
    if not paths.exists():
        known = ", ".join(p.name for p in known_campaigns(home)) or "none"
        raise InboxError(
            f"no campaign named {name!r} in {campaigns_root(home)}; known campaigns: {known}. "
            f"Start one with `autoresearch run campaign.yaml` (or set AUTORESEARCH_HOME)."
        )
    return Inbox(paths)


def post(
    name: str, command: Command | str, payload: dict[str, Any] | None = None, author: str = "cli", home: Home = None
) -> SteeringMessage:
    """Post one command to campaign `name`'s inbox; its runner applies it at the next replan.

    `command` is a command record, or a kind with its `payload` (validated by `parse_command`;
    raises `InboxError` with what to write)."""
    if isinstance(command, str):
        try:
            command = parse_command(command, payload)
        except CommandError as exc:
            raise InboxError(str(exc)) from None
    elif payload:
        raise InboxError(f"give either a {type(command).__name__} command or a kind with a payload, not both")
    inbox = open_inbox(name, home)
    try:
        return inbox.post(command, author)
    finally:
        inbox.close()


def read_messages(name: str, *, pending_only: bool = False, since_id: int = 0, home: Home = None) -> list[SteeringMessage]:
    """Campaign `name`'s messages after `since_id`, oldest first."""
    inbox = open_inbox(name, home)
    try:
        return inbox.messages(pending_only=pending_only, since_id=since_id)
    finally:
        inbox.close()
