"""Slash commands without a runner: exact spellings, typed values, and errors that say how to
write it (the changes they ask for are checked in tests/autoresearch/steering/test_overrides.py)."""

from __future__ import annotations

from datetime import datetime

import pytest
from click.testing import CliRunner

from autoresearch.chat import SlashError, parse
from autoresearch.cli import _register, app
from autoresearch.nightly import WindowError, window_end

_register()

def test_slash_commands_parse_to_the_chat_actions():
    assert parse("/status") == ("status", {})
    assert parse("/logs 12") == ("logs", {"trial": 12})
    assert parse("/budget max_trials=80") == ("set_budget", {"changes": {"max_trials": 80}})
    assert parse("/space lr=1e-4..1e-2 activation=relu,tanh") == ("set_space", {"params": {
        "lr": [1e-4, 1e-2], "activation": ["relu", "tanh"]}})  # fmt: skip
    assert parse("/try lr=3e-3 hidden=128") == ("try_trial", {"params": {"lr": 0.003, "hidden": 128}})
    assert parse("/note try smaller lr first") == ("note", {"text": "try smaller lr first"})
    assert parse("/approve 3 looks cheap") == ("approve", {"request": 3, "reason": "looks cheap"})
    assert parse("/deny") == ("deny", {})
    assert parse("/cancel 4") == ("cancel_trial", {"trial": 4})
    for bad, needle in [("/logs", "/logs TRIAL"), ("/budget max_trials", "name=value"), ("/space lr=a..b", "low..high"),
                        ("/stauts", "did you mean '/status'"), ("/note", "/note TEXT")]:  # fmt: skip
        with pytest.raises(SlashError, match=needle):
            parse(bad)


def test_bad_chat_and_nightly_input_exits_2(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTORESEARCH_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, ["chat", "nope"])
    assert result.exit_code == 2 and "no campaign named 'nope'" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(app, ["nightly", str(tmp_path / "a.yaml"), "--until", "07:00"])
    assert result.exit_code == 2 and "not found" in result.output
    result = CliRunner().invoke(app, ["nightly", str(tmp_path / "a.yaml")])
    assert result.exit_code == 2 and "--until HH:MM" in result.output
    assert window_end("07:00", None, datetime(2026, 11, 30, 22, 0)).hour == 7
    assert window_end("07:00", None, datetime(2026, 11, 30, 22, 0)).day == 1
    with pytest.raises(WindowError, match="not a time of day"):
        window_end("25:00", None)
