"""The trial ledger: the `TrialLedger` seam, its `CampaignFacts`, the Optuna-backed `Ledger`, and
`LedgerReader` (its SQLite file read with plain sqlite3, for the dashboard)."""

from autoresearch.campaign.ledger._base import LedgerError, OptunaBacked, TrialLedger
from autoresearch.campaign.ledger._sqlite_reader import LedgerReader, LedgerSnapshot
from autoresearch.campaign.ledger.facts import FINAL_STATES, CampaignFacts
from autoresearch.campaign.ledger.optuna_ledger import Ledger

__all__ = [
    "FINAL_STATES",
    "CampaignFacts",
    "Ledger",
    "LedgerError",
    "LedgerReader",
    "LedgerSnapshot",
    "OptunaBacked",
    "TrialLedger",
]
