"""The trial ledger: the `TrialLedger` seam, its `CampaignFacts`, the Optuna-backed `Ledger`, and
`LedgerReader` (its SQLite file read with plain sqlite3, for the dashboard). Names are imported on
first use (PEP 562): `LedgerReader` loads neither Optuna nor SQLAlchemy, `Ledger` loads both."""

import typing as _typing

from compute.lazy_exports import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from autoresearch.campaign.errors import LedgerError
    from autoresearch.campaign.ledger._base import OptunaBacked, TrialLedger
    from autoresearch.campaign.ledger._sqlite_reader import LedgerReader, LedgerSnapshot
    from autoresearch.campaign.ledger.facts import FINAL_STATES, CampaignFacts
    from autoresearch.campaign.ledger.optuna_ledger import Ledger

_WHERE = {
    "LedgerError": "autoresearch.campaign.errors",
    "OptunaBacked": "autoresearch.campaign.ledger._base",
    "TrialLedger": "autoresearch.campaign.ledger._base",
    "LedgerReader": "autoresearch.campaign.ledger._sqlite_reader",
    "LedgerSnapshot": "autoresearch.campaign.ledger._sqlite_reader",
    "FINAL_STATES": "autoresearch.campaign.ledger.facts",
    "CampaignFacts": "autoresearch.campaign.ledger.facts",
    "Ledger": "autoresearch.campaign.ledger.optuna_ledger",
}
"""Public name -> the module that defines it."""

__getattr__ = _lazy_exports(__name__, _WHERE)


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
