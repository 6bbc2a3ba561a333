"""The compute test helpers ship in the package (compute/testing/jobs.py); tests import them from here too."""

from compute.testing.jobs import (
    COUNTER, TIMEOUT, counter_job, env_job, gate_job, log_so_far, log_text, quick_job, wait_started, wait_state, wait_until,
)

__all__ = [
    "COUNTER", "TIMEOUT", "counter_job", "env_job", "gate_job", "log_so_far", "log_text", "quick_job", "wait_started", "wait_state",
    "wait_until",
]
