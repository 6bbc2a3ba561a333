"""The CLI's rich console takes the width COLUMNS gives each invocation, also within one process
(CliRunner runs many commands in one; a console made under an earlier COLUMNS must not keep it)."""

from __future__ import annotations

import pytest

from autoresearch.cli._common import UNWRAPPED_WIDTH, console


def test_the_console_follows_columns_from_one_invocation_to_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    assert console.width == 80
    monkeypatch.setenv("COLUMNS", "200")
    assert console.width == 200
    monkeypatch.delenv("COLUMNS")
    assert console.width == UNWRAPPED_WIDTH  # not a terminal, no COLUMNS: no wrapping
