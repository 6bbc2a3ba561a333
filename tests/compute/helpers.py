"""The compute test helpers ship in the package (compute/testing/jobs.py); tests import them from here too."""

import os
from pathlib import Path

import pytest

from compute.testing.jobs import (
    COUNTER, TIMEOUT, counter_job, env_job, gate_job, log_so_far, log_text, quick_job, wait_started, wait_state, wait_until,
)

__all__ = [
    "COUNTER", "TIMEOUT", "counter_job", "env_job", "gate_job", "log_so_far", "log_text", "quick_job", "real_gpu_host",
    "wait_started", "wait_state", "wait_until",
]

_HEALTHY_SMI = Path(__file__).resolve().parents[1] / "data" / "nvidia_smi" / "healthy_8x_h100.txt"


def real_gpu_host(folder: Path, monkeypatch: pytest.MonkeyPatch, gpus: int = 4) -> None:
    """Put an nvidia-smi stand-in first on PATH (no GPU here) for a daemon started afterwards: it lists
    `gpus` GPUs and answers the gpu probe's query with healthy H100s, so node `local` has real GPUs."""
    folder.mkdir(parents=True, exist_ok=True)
    smi = folder / "nvidia-smi"
    smi.write_text(f'#!/bin/sh\ncase "$*" in\n  "--query-gpu=index "*) seq 0 {gpus - 1} ;;\n'
                   f'  *) cat "{_HEALTHY_SMI}" ;;\nesac\n')
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
