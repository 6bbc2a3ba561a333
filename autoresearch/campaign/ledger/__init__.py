"""The trial ledger: the `TrialLedger` seam, its `CampaignFacts`, and the Optuna-backed `Ledger`."""

from autoresearch.campaign.ledger._base import LedgerError, OptunaBacked, TrialLedger
from autoresearch.campaign.ledger.facts import FINAL_STATES, CampaignFacts
from autoresearch.campaign.ledger.optuna_ledger import Ledger

__all__ = ["FINAL_STATES", "CampaignFacts", "Ledger", "LedgerError", "OptunaBacked", "TrialLedger"]
