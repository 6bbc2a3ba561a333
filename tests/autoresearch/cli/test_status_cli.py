"""`autoresearch status [NAME] --json` reads the ledger file itself: it answers what the Optuna-storage
read answers (`campaign_status(Ledger.load(name))`) without importing Optuna, SQLAlchemy, langgraph
or mlflow, the command an agent polls all night."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from autoresearch.campaign import Ledger, Proposal, TrialFailure, campaign_status, read_status
from autoresearch.testing._checks import suite_campaign
from tests.autoresearch.cli.climodules import FORBIDDEN, run_cli

HEAVY = (*FORBIDDEN, "sqlalchemy", "numpy")


def test_status_json_reads_the_ledger_file_without_the_heavy_packages(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ledger = Ledger.open(suite_campaign(tmp_path, "polled"), home=home)
    for i, kind in enumerate("abc"):
        number = ledger.admit(Proposal(params={"x": i / 2, "y": i, "kind": kind})).trial_number
        ledger.mark_launched(number, f"job-{number:010d}")
    ledger.complete(0, 3.5, gpu_seconds=7200.0)
    ledger.fail(1, TrialFailure.user, log_excerpt="ValueError: bad lr")
    now = datetime.now(UTC)
    assert read_status("polled", home, now)[1] == campaign_status(Ledger.load("polled", home), now)

    dump = tmp_path / "modules.json"
    shown, heavy = run_cli(home, "status", "polled", "--json", dump=dump, forbidden=HEAVY)
    assert shown.returncode == 0 and heavy == [], (shown.stderr, heavy)
    status = json.loads(shown.stdout)
    assert status["budget_used"]["trials"] == 3 and status["budget_used"]["gpu_hours"] == 2.0
    assert status["best_trial"]["number"] == 0 and status["best_trial"]["value"] == 3.5
    assert [t["state"] for t in status["trials"]] == ["complete", "failed", "running"]

    listed, heavy = run_cli(home, "status", "--json", dump=dump, forbidden=HEAVY)
    assert listed.returncode == 0 and heavy == [], (listed.stderr, heavy)
    assert [(c["name"], c["trials"], c["best_value"]) for c in json.loads(listed.stdout)] == [("polled", 3, 3.5)]

    missing, heavy = run_cli(home, "status", "nope", "--json", dump=dump, forbidden=HEAVY)
    assert missing.returncode == 2 and heavy == []
    assert "no campaign named 'nope'" in missing.stderr and "known campaigns: polled" in missing.stderr


def test_status_top_k_gives_an_agent_the_best_trials_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ledger = Ledger.open(suite_campaign(tmp_path, "ranked"), home=home)
    for i, value in enumerate([1.0, 7.0, 3.0, 9.0, 5.0]):  # maximize: best 3, then 1
        number = ledger.admit(Proposal(params={"x": i / 2, "y": i, "kind": "a"})).trial_number
        ledger.mark_launched(number, f"job-{number:010d}")
        ledger.complete(number, value)
    dump = tmp_path / "modules.json"

    best, heavy = run_cli(home, "status", "ranked", "--sort", "value", "--top", "2", "--json", dump=dump, forbidden=HEAVY)
    latest = run_cli(home, "status", "ranked", "--top", "2", "--json", dump=dump)[0]
    table = run_cli(home, "status", "ranked", "--sort", "value", "--top", "2", dump=dump)[0]
    nameless = run_cli(home, "status", "--top", "2", dump=dump)[0]

    assert best.returncode == 0 and heavy == [], (best.stderr, heavy)
    assert [(t["number"], t["value"]) for t in json.loads(best.stdout)["trials"]] == [(3, 9.0), (1, 7.0)]
    assert [t["number"] for t in json.loads(latest.stdout)["trials"]] == [3, 4]
    rows = [line.split()[0] for line in table.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert rows == ["3", "1"] and "showing the best 2 of 5 trials by value" in table.stdout
    assert nameless.returncode == 2 and "give its name (`autoresearch status NAME --top 2`)" in nameless.stderr
