"""`classify_failure`: a failed attempt's class by the built-in rules, as one call.

The daemon classifies with its `HealthMonitor`'s classifier (the built-in rules after
any from `HealthConfig.failure_rules`); this is the same verdict without a monitor,
for callers that only hold an exit status and a log tail.
"""

from __future__ import annotations

from compute.health import Classifier
from compute.records import FailureClass

_BUILTIN = Classifier()


def classify_failure(exit_code: int, signal: int | None, log_tail: str) -> FailureClass:
    """infra, user or resource, from the exit code, the signal that ended it and its log tail."""
    return _BUILTIN.classify(exit_code, log_tail, signal).failure_class
