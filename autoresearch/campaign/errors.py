"""The campaign package's error for what a ledger or a campaign name cannot do (below the paths,
so the one function that turns a name into a folder can raise it)."""

from __future__ import annotations


class LedgerError(Exception):
    """The ledger cannot do what was asked; the message says why and what to do."""
