"""The Optuna-backed ledger passes the `TrialLedger` conformance suite, as the runner's cached
writer, as an uncached one, and on an Optuna release it was not tested with."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from autoresearch.campaign import Campaign, Ledger, LedgerReader, Proposal, TrialLedger
from autoresearch.testing import LedgerHarness, LedgerSuite
from autoresearch.testing.ledger_suite import PARAMS
from autoresearch.testing._checks import suite_campaign


def _as_asked(campaign: Campaign, cache: bool) -> TrialLedger:
    return Ledger.open(campaign, cache=cache)


def _uncached(campaign: Campaign, cache: bool) -> TrialLedger:
    return Ledger.open(campaign)


@pytest.fixture
def untested_optuna(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The installed Optuna reads as a release the ledger was not tested with."""
    from autoresearch.campaign.ledger import _optuna_internals

    monkeypatch.setattr(_optuna_internals, "optuna_version", lambda: "5.1.0")  # the version string the check reads
    _optuna_internals.internals_usable.cache_clear()
    yield
    _optuna_internals.internals_usable.cache_clear()


class TestOptunaLedger(LedgerSuite):
    """As the runner's cached writer, as an uncached one, and on an Optuna release the ledger was
    not tested with (the public API only)."""

    @pytest.fixture(params=["as-asked", "never-cached", "untested-optuna"])
    def harness(self, request: pytest.FixtureRequest, home: Path, tmp_path: Path) -> LedgerHarness:
        if request.param == "untested-optuna":
            request.getfixturevalue("untested_optuna")
        opener = _uncached if request.param == "never-cached" else _as_asked
        return LedgerHarness(open=opener, load=Ledger.load, base_dir=tmp_path)


def test_an_untested_optuna_release_keeps_to_the_public_api(
    untested_optuna: None, home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from autoresearch.campaign.ledger._mirror import MirroredStorage

    with caplog.at_level(logging.WARNING, logger="autoresearch.ledger"):
        ledger = Ledger.open(suite_campaign(tmp_path), cache=True)
    assert "optuna 5.1.0 is not a release autoresearch was tested with here (5.0.x)" in caplog.text
    assert not isinstance(ledger._storage, MirroredStorage), "no trial is written with Optuna's tables by hand"
    n = ledger.admit(Proposal(params=PARAMS)).trial_number
    assert n is not None
    ledger.mark_launched(n, "job-0")
    ledger.report(n, 1, 2.0)
    ledger.complete(n, 3.0, gpu_seconds=5.0)
    read = LedgerReader("suite").read()  # the dashboard's reader: Optuna's public API too
    assert read.trials == Ledger.load("suite").trials() == ledger.trials()
    assert (read.trials[0].value, read.trials[0].params) == (3.0, PARAMS)
