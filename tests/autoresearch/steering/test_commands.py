"""The command vocabulary: each kind is validated once, by `parse_command`, whoever sends it; a
command's inbox row is the kind and a JSON payload (the format older versions wrote), so a row
written before reads back as the same command, and an unreadable one is kept and said why."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, UTC

import pytest
from pydantic import ValidationError

from autoresearch.campaign import CampaignPaths
from autoresearch.steering import (
    KINDS,
    Approve,
    CancelTrial,
    CommandError,
    Inbox,
    Note,
    Pause,
    SetBudget,
    SetSpace,
    TryTrial,
    WindowEnd,
    parse_command,
)


def test_a_kind_and_payload_become_one_typed_command():
    assert parse_command("pause", {}) == Pause()
    assert parse_command("note", {"text": "  try smaller lr "}) == Note(text="try smaller lr")
    assert parse_command("budget", {"changes": {"max_trials": 80}}) == SetBudget(changes={"max_trials": 80})
    assert parse_command("cancel", {"trial": 3}) == CancelTrial(trial=3)
    assert parse_command("approve", {}) == Approve(request=None)
    at = parse_command("window_end", {"at": "2026-12-01T06:00:00+00:00"})
    assert isinstance(at, WindowEnd) and at.at == datetime(2026, 12, 1, 6, tzinfo=UTC)
    assert set(KINDS) == {"pause", "resume", "stop", "note", "budget", "space", "priority", "try", "cancel",
                          "approve", "deny", "window_end"}  # fmt: skip
    with pytest.raises(ValidationError):  # frozen: a posted command never changes
        Pause().reason = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kind", "payload", "needle"),
    [
        ("note", {}, 'a note message needs payload {"text": "try a smaller lr first"}: text: Field required'),
        ("note", {"text": "   "}, "text: String should have at least 1 character"),
        ("cancel", {"trial": -1}, "trial: Input should be greater than or equal to 0"),
        ("cancel", {"trial": "four"}, 'a cancel message needs payload {"trial": 3}'),
        ("pause", {"reson": "typo"}, "reson: Extra inputs are not permitted"),
        ("window_end", {"at": "06:00 tomorrow"}, "at: Input should be a valid datetime"),
        ("later_kind", {}, "unknown message kind 'later_kind'; known: pause, resume"),
        ("Drop Table", {}, "must be a lower-case word"),
    ],
)
def test_a_bad_command_is_refused_with_what_to_write(kind, payload, needle):
    with pytest.raises(CommandError) as caught:
        parse_command(kind, payload)
    assert needle in str(caught.value)


def test_inbox_rows_keep_the_old_format_and_read_back_as_commands(tmp_path):
    paths = CampaignPaths(tmp_path / "mlp")
    inbox = Inbox(paths)
    posted = [Pause(reason="lunch"), SetSpace(params={"lr": [1e-4, 1e-2]}), TryTrial(params={"lr": 0.003}),
              WindowEnd(at=datetime(2026, 12, 1, 6, tzinfo=UTC))]  # fmt: skip
    for command in posted:
        inbox.post(command, author="alice")
    inbox.close()
    db = sqlite3.connect(paths.inbox_db)
    rows = db.execute("SELECT kind, payload FROM messages ORDER BY id").fetchall()
    assert [(k, json.loads(p)) for k, p in rows] == [
        ("pause", {"reason": "lunch"}), ("space", {"params": {"lr": [0.0001, 0.01]}}), ("try", {"params": {"lr": 0.003}}),
        ("window_end", {"at": "2026-12-01T06:00:00Z"}),
    ]  # fmt: skip
    with db:  # rows an older version wrote: a note, and a kind this version no longer knows
        db.execute("INSERT INTO messages (ts, author, kind, payload) VALUES (1, 'old', 'note', '{\"text\": \"hi\"}')")
        db.execute("INSERT INTO messages (ts, author, kind, payload) VALUES (2, 'old', 'retire', '{}')")
    db.close()
    inbox = Inbox(paths)
    messages = inbox.messages()
    inbox.close()
    assert [m.command for m in messages] == [*posted, Note(text="hi"), None]
    assert messages[-1].kind == "retire" and "unknown message kind 'retire'" in messages[-1].problem
