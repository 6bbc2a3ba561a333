"""The one place where a failed attempt is classified as infra, user or resource.

The daemon calls `classify_failure` for every attempt that exited non-zero without
being asked to stop. Health-aware classifiers (NCCL, Xid, ECC ...) plug in here.
"""

from __future__ import annotations

from compute.records import FailureClass


def classify_failure(exit_code: int, signal: int | None, log_tail: str) -> FailureClass:
    """Why an attempt failed. For now every failure is the user's (spends a retry)."""
    return FailureClass.user
