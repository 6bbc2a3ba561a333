"""Conformance suites shipped with the package (as optuna ships `optuna.testing`): every
implementation of a protocol runs the same checks. Plain functions, no test framework needed."""

from autoresearch.testing import ledger_suite, policy_suite
from autoresearch.testing._checks import SPACE, raises, score, suite_campaign
from autoresearch.testing.ledger_suite import LedgerHarness
from autoresearch.testing.policy_suite import PolicyHarness

__all__ = [
    "SPACE",
    "LedgerHarness",
    "PolicyHarness",
    "ledger_suite",
    "policy_suite",
    "raises",
    "score",
    "suite_campaign",
]
