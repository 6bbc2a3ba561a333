"""`LedgerReader` (the ledger's SQLite file read with plain sqlite3) gives what the Optuna-storage
reader `Ledger.load` gives, for every kind of trial, after more writes, and after a start-over."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import optuna
import pytest

from autoresearch.campaign import (
    CampaignState,
    Ledger,
    LedgerError,
    LedgerReader,
    Proposal,
    TrialFailure,
    TrialState,
    campaign_status,
    status_of,
)
from tests.autoresearch.campaign.conftest import make_campaign

NOW = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture
def far_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time 9 h off UTC, so trial times read without Optuna's UTC -> local step would differ."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _same_as_optuna(reader: LedgerReader, name: str) -> None:
    """The direct read equals `Ledger.load(name)`: trials, facts, config, and the status built from them."""
    snapshot = reader.read()
    loaded = Ledger.load(name)
    assert repr(snapshot.trials) == repr(loaded.trials())  # repr: a NaN intermediate value equals itself
    assert snapshot.facts == loaded.facts()
    assert snapshot.campaign == loaded.campaign
    assert snapshot.storage_url == loaded.storage_url
    status = status_of(snapshot.campaign, snapshot.facts, snapshot.trials, snapshot.paths.root, NOW)
    assert status == campaign_status(loaded, NOW)


def test_the_direct_read_equals_the_optuna_storage_read(home: Path, tmp_path: Path, far_zone: None) -> None:
    writer = Ledger.open(make_campaign(tmp_path, budget={"max_trials": 30, "max_parallel": 4}), cache=True)
    for i, kind in enumerate("abcabc"):
        writer.admit(Proposal(params={"x": i / 2 - 1.0, "y": i, "kind": kind}, rationale=f"r{i}", patch="--- a\n"))
    for number in range(5):
        writer.mark_launched(number, f"job-{number:010d}")
        writer.set_mlflow_run(number, f"run{number}")
    writer.report(0, 1, 3.5)
    writer.report(0, 2, float("inf"))  # stored as INF_POS, read back as inf
    writer.complete(0, 7.25, gpu_seconds=30.0)
    writer.report(1, 1, 2.0)
    writer.prune(1, gpu_seconds=10.0)  # its value: the last intermediate value
    writer.fail(2, TrialFailure.user, log_excerpt="Traceback ...\nValueError: bad lr", gpu_seconds=5.0)
    writer.cancel(3, "stopped from chat")
    writer.report(4, 1, float("nan"))  # stored as NAN; 4 runs on; 5 is proposed, not launched
    writer.set_mlflow_experiment("17")
    writer.append_note("tried the corners first")
    writer.add_llm_cost(0.42)
    half = optuna.load_study(study_name="toy", storage=writer.storage_url).ask()  # asked, parameters not drawn
    half.suggest_float("x", -5.0, 5.0)
    writer.study_view().enqueue_trial({"x": 0.5, "y": 2, "kind": "b"})  # queued (WAITING): proposed, fixed params

    reader = LedgerReader("toy")
    _same_as_optuna(reader, "toy")
    states = [t.state for t in reader.read().trials]
    assert states == [TrialState.complete, TrialState.pruned, TrialState.failed, TrialState.cancelled,
                      TrialState.running, TrialState.proposed, TrialState.proposed]  # fmt: skip
    first = reader.read().trials[0]
    assert first.intermediate_values == {1: 3.5, 2: float("inf")} and first.mlflow_run_id == "run0"

    # more writes: the reader keeps the ended trials and reads the new and unfinished ones again
    writer.complete(4, 1.0, gpu_seconds=1.0)
    writer.mark_launched(5, "job-0000000005")
    writer.admit(Proposal(params={"x": 2.0, "y": 1, "kind": "c"}))
    writer.set_state(CampaignState.paused, "checking the data")
    _same_as_optuna(reader, "toy")
    assert [t.state for t in reader.read().trials][4:6] == [TrialState.complete, TrialState.running]


def test_a_campaign_started_over_is_read_afresh(home: Path, tmp_path: Path) -> None:
    writer = Ledger.open(make_campaign(tmp_path))
    writer.admit(Proposal(params={"x": 1.0, "y": 3, "kind": "b"}))
    writer.mark_launched(0, "job-0000000000")
    writer.complete(0, 9.5)
    reader = LedgerReader("toy")
    assert [t.value for t in reader.read().trials] == [9.5]

    shutil.rmtree(home / "campaigns" / "toy")
    with pytest.raises(LedgerError, match="no campaign named 'toy'"):
        reader.read()
    again = Ledger.open(make_campaign(tmp_path))
    again.admit(Proposal(params={"x": 0.0, "y": 0, "kind": "a"}))
    again.mark_launched(0, "job-0000000001")
    again.fail(0, TrialFailure.user, log_excerpt="boom")
    _same_as_optuna(reader, "toy")  # not the old trial 0 it kept
    assert [t.state for t in reader.read().trials] == [TrialState.failed]
