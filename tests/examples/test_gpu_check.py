"""benchmarks/gpu_check.sh where there are no GPUs (a fake nvidia-smi stands in for the GPU cases)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.examples._jobs import REPO

SCRIPT = REPO / "benchmarks" / "gpu_check.sh"


def run_check(path_dirs: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PATH": os.pathsep.join([*path_dirs, os.environ["PATH"]]), **env}
    return subprocess.run(["bash", str(SCRIPT)], env=environ, capture_output=True, text=True, timeout=120)


def fake_nvidia_smi(folder, gpus: int) -> str:
    listing = "".join(f"echo 'GPU {i}: NVIDIA H100 80GB HBM3 (UUID: GPU-{i})'\n" for i in range(gpus))
    script = folder / "nvidia-smi"
    script.write_text(f'#!/bin/sh\nif [ "$1" = "-L" ]; then\n{listing}fi\n')
    script.chmod(0o755)
    return str(folder)


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has nvidia-smi")
def test_without_nvidia_smi_it_says_so_and_exits_0():
    result = run_check([])
    assert result.returncode == 0
    assert "no GPU on this machine" in result.stdout


def test_when_nvidia_smi_lists_no_gpu_it_says_so_and_exits_0(tmp_path):
    result = run_check([fake_nvidia_smi(tmp_path, 0)])
    assert result.returncode == 0
    assert "nvidia-smi lists none" in result.stdout


def _torch_sees_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


@pytest.mark.skipif(_torch_sees_cuda(), reason="torch here can use CUDA: the script would run a campaign")
def test_gpus_that_torch_cannot_use_fail_with_what_to_do(tmp_path):
    result = run_check([fake_nvidia_smi(tmp_path, 2)], PYTHON=sys.executable)
    assert result.returncode == 1
    assert "lists 2 GPU(s) but torch" in result.stderr and "torch==2.13.0" in result.stderr
