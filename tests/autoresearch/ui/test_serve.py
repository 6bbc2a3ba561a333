"""Serving: `--open` hands the browser the served URL (with the token), the Fleet page is served
without the campaign machinery, and a campaign page without Optuna, SQLAlchemy, mlflow or langgraph
(what it reads is the ledger's SQLite file and the config models)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.autoresearch.runner.conftest import wait_until
from tests.autoresearch.ui.server import ROOT, ui_server

TOKEN = "open-sesame-token"


@pytest.mark.parametrize("token", [None, TOKEN])
def test_open_gives_the_browser_the_served_url(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, token: str | None
) -> None:
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "fake-browser"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> {opened}\n')
    browser.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(browser))  # Python's webbrowser runs `$BROWSER URL`
    args = ["--open", *(["--token", token] if token else [])]
    with ui_server(tmp_path / "home", *args) as base:
        lines = wait_until(lambda: opened.is_file() and opened.read_text().splitlines(), what="the browser to be run")
        assert lines == [f"{base}/?token={token}" if token else f"{base}/"]
        with httpx.Client(follow_redirects=True) as web:  # the URL opened is one that lets the browser in
            page = web.get(lines[0])
        assert page.status_code == 200 and "<h1>Fleet</h1>" in page.text
        if token:
            assert httpx.get(f"{base}/fleet").status_code == 401  # without the token it would not


def test_the_fleet_page_imports_no_campaign_machinery(tmp_path: Path) -> None:
    script = """
import json, sys
from pathlib import Path
from starlette.testclient import TestClient
from autoresearch.ui import UiSettings, create_app
with TestClient(create_app(UiSettings(home=Path(sys.argv[1])), warm=False), base_url="http://localhost") as web:
    status = web.get("/fleet").status_code
heavy = ("optuna", "mlflow", "langgraph", "sqlalchemy", "matplotlib", "autoresearch.campaign")
print(json.dumps({"status": status, "imported": [m for m in heavy if m in sys.modules]}))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "home")], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    assert json.loads(done.stdout.splitlines()[-1]) == {"status": 200, "imported": []}


def test_a_campaign_page_imports_neither_optuna_nor_sqlalchemy(tmp_path: Path) -> None:
    from autoresearch.campaign import Ledger, Proposal
    from autoresearch.testing._checks import suite_campaign

    home = tmp_path / "home"
    ledger = Ledger.open(suite_campaign(tmp_path, "light"), home=home)
    number = ledger.admit(Proposal(params={"x": 0.5, "y": 2, "kind": "b"})).trial_number
    ledger.mark_launched(number, "job-0000000001")
    ledger.complete(number, 4.25)
    script = """
import json, sys
from pathlib import Path
from starlette.testclient import TestClient
from autoresearch.ui import UiSettings, create_app
with TestClient(create_app(UiSettings(home=Path(sys.argv[1])), warm=False), base_url="http://localhost") as web:
    page = web.get("/campaigns/light")
heavy = ("optuna", "sqlalchemy", "numpy", "mlflow", "langgraph", "matplotlib")
print(json.dumps({"status": page.status_code, "shows": "4.25" in page.text, "imported": [m for m in heavy if m in sys.modules]}))
"""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script, str(home)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    assert json.loads(done.stdout.splitlines()[-1]) == {"status": 200, "shows": True, "imported": []}
