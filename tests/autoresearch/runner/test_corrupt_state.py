"""Corrupt and lost campaign state (issue 20 items 5 and 10): a truncated, deleted, replaced or
garbage optuna.db, a truncated mlflow.db, a garbage graph.db or inbox.db, and a campaign folder
deleted mid-run are each refused with one message naming the file and what to do: never a
silent fresh start, never a traceback (`autoresearch run` exits 2)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from autoresearch.campaign import CampaignPaths, CampaignState, LedgerError
from autoresearch.cli import _register, app
from autoresearch.runner import RunnerError, run_campaign
from compute import Client
from tracking import TrackingConfig
from tests.autoresearch.runner.conftest import FAST, REPO, Background, campaign_jobs, campaign_of, synthetic_config, wait_until, write_config

_register()
cli = CliRunner()


def _ran(mlflow: TrackingConfig, home: Path, **overrides) -> tuple[dict, CampaignPaths]:
    data = synthetic_config(mlflow, steps=2, step_seconds=0.01, budget={"max_trials": 2, "max_parallel": 2}, **overrides)
    outcome = run_campaign(campaign_of(data), home=home, settings=FAST)
    assert outcome.state is CampaignState.completed, outcome.reason
    return data, CampaignPaths.of(data["name"], home)


def _rerun(data: dict, home: Path) -> None:
    more = {**data, "budget": {**data["budget"], "max_trials": 4}}
    run_campaign(campaign_of(more), home=home, settings=FAST)


def _sqlite_files(path: Path) -> list[Path]:
    return [path, Path(f"{path}-wal"), Path(f"{path}-shm")]


def _truncate(path: Path) -> None:
    for file in _sqlite_files(path)[1:]:
        file.unlink(missing_ok=True)
    path.write_bytes(b"")


@pytest.mark.parametrize("damage, expected", [
    ("truncated", "optuna.db is empty, but campaign"),
    ("deleted", "optuna.db is missing, but campaign"),
    ("garbage", "optuna.db is not a usable SQLite database (file is not a database)"),
])  # fmt: skip
def test_a_damaged_ledger_is_refused(compute_home: Path, tracking, damage: str, expected: str) -> None:
    data, paths = _ran(tracking, compute_home)
    if damage == "truncated":
        _truncate(paths.ledger_db)
    else:
        for file in _sqlite_files(paths.ledger_db):
            file.unlink(missing_ok=True)
        if damage == "garbage":
            paths.ledger_db.write_bytes(b"not sqlite at all " * 300)
    with pytest.raises(LedgerError) as info:
        _rerun(data, compute_home)
    assert expected in str(info.value) and f"move the folder {paths.root} away" in str(info.value)
    assert len(campaign_jobs(Client(compute_home, autostart=False), data["name"])) == 2  # no new trial ran


def test_a_ledger_replaced_by_a_recreated_study_is_refused(compute_home: Path, tracking) -> None:
    data, paths = _ran(tracking, compute_home)
    saved = paths.root.with_name("saved")
    shutil.copytree(paths.root, saved)
    shutil.rmtree(paths.root)
    _ran(tracking, compute_home, name=data["name"])  # a new campaign of the same name
    shutil.copy(saved / "ledger.started", paths.ledger_marker)  # the old folder's marker, the new study
    with pytest.raises(LedgerError, match="the file was replaced or recreated"):
        _rerun(data, compute_home)


def test_the_cli_says_so_in_one_paragraph(compute_home: Path, tracking, tmp_path: Path) -> None:
    data, paths = _ran(tracking, compute_home)
    _truncate(paths.ledger_db)
    result = cli.invoke(app, ["run", str(write_config(tmp_path, data)), "--max-trials", "4", "-q"],
                        env={"COLUMNS": "400"})  # fmt: skip
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output and "optuna.db is empty" in " ".join(result.output.split())


def test_a_truncated_mlflow_store_is_refused(compute_home: Path, tracking, tmp_path: Path) -> None:
    store = tmp_path / "own-mlflow.db"
    data, _ = _ran(TrackingConfig(tracking_uri=f"sqlite:///{store}"), compute_home)
    _truncate(store)
    more = write_config(tmp_path, data)  # a new process: MLflow would create the schema afresh there
    done = subprocess.run([sys.executable, "-c", "from autoresearch.cli import main; main()", "run", str(more),
                           "--max-trials", "4", "-q"], env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "400"},
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    text = " ".join(done.stderr.split())
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"the MLflow store sqlite:///{store} lost campaign" in text and "Restore it from a backup" in text
    assert len(campaign_jobs(Client(compute_home, autostart=False), data["name"])) == 2


@pytest.mark.parametrize("file", ["graph_db", "inbox_db"])
def test_a_garbage_runner_file_is_named(compute_home: Path, tracking, file: str) -> None:
    data, paths = _ran(tracking, compute_home)
    path = getattr(paths, file)
    for part in _sqlite_files(path):
        part.unlink(missing_ok=True)
    path.write_bytes(b"garbage " * 1000)
    with pytest.raises(RunnerError) as info:
        _rerun(data, compute_home)
    assert f"{path} is not a usable SQLite database (file is not a database)" in str(info.value)
    assert "restore it from a backup" in str(info.value)


def test_a_campaign_folder_deleted_mid_run_fails_loudly(compute_home: Path, tracking) -> None:
    data = synthetic_config(tracking, steps=40, step_seconds=0.1, budget={"max_trials": 6, "max_parallel": 2})
    campaign = campaign_of(data)
    runner = Background(lambda: run_campaign(campaign, home=compute_home, settings=FAST))
    client = Client(compute_home, autostart=False)
    wait_until(lambda: campaign_jobs(client, campaign.name), what="the first trial")
    root = CampaignPaths.of(campaign.name, compute_home).root
    wait_until(lambda: shutil.rmtree(root, ignore_errors=True) or not root.is_dir(),
               what="the folder removed")  # the runner may write a file into it while rmtree walks it
    with pytest.raises(RunnerError) as info:
        runner.join(timeout=120)
    assert "vanished while the runner worked on it" in str(info.value)
    wait_until(lambda: all(j.state.final for j in campaign_jobs(client, campaign.name)), what="its trials cancelled")


def test_a_first_start_killed_while_making_the_ledger_starts_cleanly(compute_home: Path, tracking) -> None:
    import optuna

    from autoresearch.campaign import Ledger

    data = synthetic_config(tracking, steps=2, step_seconds=0.01, budget={"max_trials": 2, "max_parallel": 2})
    paths = CampaignPaths.of(data["name"], compute_home)
    paths.root.mkdir(parents=True)
    optuna.storages.RDBStorage(f"sqlite:///{paths.ledger_db}")  # the schema, no study yet: the SIGKILL came here
    with pytest.raises(LedgerError, match="was never fully started"):  # not "truncated or replaced"
        Ledger.load(data["name"], compute_home)
    assert run_campaign(campaign_of(data), home=compute_home, settings=FAST).state is CampaignState.completed


def _cli_run(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from autoresearch.cli import main; main()", "run", str(config),
                           *args], env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "400"},
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_overwritten_ledger_pages_are_one_clear_error(compute_home: Path, tracking, tmp_path: Path) -> None:
    """Pages of optuna.db overwritten (SQLITE_CORRUPT reached through Optuna's StorageInternalError)."""
    import sqlite3

    data, paths = _ran(tracking, compute_home)
    with sqlite3.connect(paths.ledger_db) as db:  # every page in the file itself, none left in its -wal
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = paths.ledger_db.stat().st_size
    with open(paths.ledger_db, "r+b") as f:
        for page in range(1, size // 4096):  # every page but the header: no table survives whole
            f.seek(page * 4096)
            f.write(b"\xde\xad" * 2048)
    done = _cli_run(write_config(tmp_path, data), "--max-trials", "4", "-q")
    text = " ".join(done.stderr.split())
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"{paths.ledger_db} is not a usable SQLite database" in text and "Restore optuna.db" in text, text


@pytest.mark.parametrize("damage", ["binary", "folder"])
def test_a_damaged_steering_file_is_named(compute_home: Path, tracking, tmp_path: Path, damage: str) -> None:
    data, paths = _ran(tracking, compute_home)
    if damage == "binary":
        paths.overrides.write_bytes(bytes(range(256)) * 4)
    else:
        paths.overrides.mkdir()
    done = _cli_run(write_config(tmp_path, data), "--max-trials", "4", "-q")
    text = " ".join(done.stderr.split())
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"{paths.overrides} is not a valid steering file" in text and "Move it away" in text, text
    assert len(campaign_jobs(Client(compute_home, autostart=False), data["name"])) == 2  # no new trial ran


def test_a_garbage_mlflow_store_is_named_not_blamed_on_the_uri(compute_home: Path, tracking, tmp_path: Path) -> None:
    store = tmp_path / "own-mlflow.db"
    data, _ = _ran(TrackingConfig(tracking_uri=f"sqlite:///{store}"), compute_home)
    for part in _sqlite_files(store):
        part.unlink(missing_ok=True)
    store.write_bytes(os.urandom(20000))
    done = _cli_run(write_config(tmp_path, data), "--max-trials", "4", "-q")
    text = " ".join(done.stderr.split())
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"the MLflow store sqlite:///{store} is not a usable SQLite database" in text, text
    assert "Fix tracking.uri" not in text and "[SQL:" not in text, text


def test_a_lost_compute_store_stops_run_with_its_message(compute_home: Path, tracking, tmp_path: Path) -> None:
    from compute import ComputePaths, stop_daemon

    data, _ = _ran(tracking, compute_home)
    stop_daemon(compute_home, stop_jobs=True)
    store = ComputePaths.of(compute_home).db
    for part in _sqlite_files(store)[1:]:
        part.unlink(missing_ok=True)
    saved = store.read_bytes()
    store.write_bytes(b"")
    try:
        done = _cli_run(write_config(tmp_path, data), "--max-trials", "4", "-q")
    finally:
        store.write_bytes(saved)  # the fixture's teardown reads it
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert f"the compute store {store} lost its tables" in " ".join(done.stderr.split())



def test_a_failing_runner_says_which_trials_it_left_running(tmp_path: Path) -> None:
    """A runner that fails with jobs still out (a lost store, a dead daemon ...) leaves their
    trials running, and the reason says so and what brings them back."""
    from autoresearch.campaign import CampaignState, Ledger, Proposal
    from autoresearch.runner.run import _fail
    from tests.autoresearch.campaign.conftest import make_campaign
    from tests.autoresearch.campaign.test_ledger import PARAMS

    ledger = Ledger.open(make_campaign(tmp_path, name="left"), tmp_path / "home")
    ledger.set_state(CampaignState.running)
    for _ in range(2):
        ledger.mark_launched(ledger.admit(Proposal(params=PARAMS)).trial_number, "job-0123456789")
    _fail(ledger, RuntimeError("the compute store lost its tables"))
    assert ledger.state is CampaignState.failed
    assert "Trials 0, 1 were running" in ledger.state_reason and "`autoresearch resume left`" in ledger.state_reason
