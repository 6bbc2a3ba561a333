"""The Optuna-backed ledger passes the `TrialLedger` conformance suite, as the runner's cached
writer and as an uncached one."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from autoresearch.campaign import Campaign, Ledger, TrialLedger
from autoresearch.testing import LedgerHarness, ledger_suite


def _as_asked(campaign: Campaign, cache: bool) -> TrialLedger:
    return Ledger.open(campaign, cache=cache)


def _uncached(campaign: Campaign, cache: bool) -> TrialLedger:
    return Ledger.open(campaign)


@pytest.mark.parametrize("opener", [_as_asked, _uncached], ids=["as-asked", "never-cached"])
@pytest.mark.parametrize("check", ledger_suite.CHECKS, ids=lambda check: check.__name__)
def test_optuna_ledger(
    check: Callable[[LedgerHarness], None], opener: Callable[[Campaign, bool], TrialLedger], home: Path, tmp_path: Path
) -> None:
    check(LedgerHarness(open=opener, load=Ledger.load, base_dir=tmp_path))
