"""Conformance suites shipped with the package (as optuna ships `optuna.testing`): every
implementation of a protocol runs the same tests. Each suite is a class (`LedgerSuite`,
`PolicySuite`; `autoresearch.testing.provider_suite.ProviderSuite`) that a test module subclasses,
giving it the fixture the suite names, parametrized over the implementations."""

from autoresearch.testing._checks import SPACE, raises, score, suite_campaign
from autoresearch.testing.ledger_suite import LedgerHarness, LedgerSuite
from autoresearch.testing.policy_suite import PolicyHarness, PolicySuite

__all__ = [
    "SPACE",
    "LedgerHarness",
    "LedgerSuite",
    "PolicyHarness",
    "PolicySuite",
    "raises",
    "score",
    "suite_campaign",
]
