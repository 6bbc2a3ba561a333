"""Fixtures: a private AUTORESEARCH_HOME (`home`); campaigns come from tests.campaign.conftest."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    monkeypatch.setenv("AUTORESEARCH_HOME", str(path))
    return path
