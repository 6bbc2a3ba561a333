"""The probe suite (compute/testing/probe_suite.py) on every shipped probe.

command: real commands (`true`, a failing script, `sleep`); gpu: the nvidia-smi stand-in
replaying recorded outputs; cuda and nccl: the check script under this interpreter with a
`torch` stand-in (no GPU here): without CUDA it skips (ok), a crashing driver is critical,
a hanging one is killed at the probe's timeout.
"""

from __future__ import annotations

import sys

import pytest

from compute.health import CommandProbe, CudaProbe, GpuProbe, NcclProbe, NodeTarget
from compute.testing.probe_suite import ProbeCase, ProbeSuite
from tests.compute.health.helpers import gpu_node

NO_CUDA = "class cuda:\n    @staticmethod\n    def is_available():\n        return False\n"
CRASH = "raise SystemExit('CUDA driver initialization failed, no CUDA GPU.')\n"
HANG = "import time\ntime.sleep(600)\n"


def _command_case() -> ProbeCase:
    node = NodeTarget(name="n", gpus=(0,))
    return ProbeCase(
        healthy=lambda: (CommandProbe(["true"]), node),
        sick=lambda: (CommandProbe(["sh", "-c", "echo 'GPU 0: Xid 79'; exit 1"]), node),
        hung=lambda: (CommandProbe(["sleep", "30"], timeout_s=0.5), node),
    )


def _gpu_case(fake_smi) -> ProbeCase:
    def use(name: str, **env: str) -> GpuProbe:
        fake_smi.use(name, **env)
        return GpuProbe(nvidia_smi=fake_smi.path, timeout_s=1.0 if env else 30.0)

    return ProbeCase(
        healthy=lambda: (use("healthy_8x_h100.txt"), gpu_node(8)),
        sick=lambda: (use("ecc_uncorrected_8x_a100.txt"), gpu_node(8)),
        hung=lambda: (use("healthy_8x_h100.txt", FAKE_SMI_SLEEP="30"), gpu_node(8)),
        not_applicable=lambda: (use("healthy_8x_h100.txt"), NodeTarget(name="cpu-only")),
    )


def _torch_case(kind: type, tmp_path) -> ProbeCase:
    python = tmp_path / "python"  # this interpreter under another path: the probe runs its script
    if not python.exists():
        python.symlink_to(sys.executable)

    def with_torch(body: str, timeout_s: float = 60.0):
        pkg = tmp_path / f"fake-{abs(hash(body))}" / "torch"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").write_text(body)
        return kind(timeout_s=timeout_s, python=str(python), env={"PYTHONPATH": str(pkg.parent)})

    node = NodeTarget(name="n", gpus=(2, 3))
    return ProbeCase(
        healthy=lambda: (with_torch(NO_CUDA), node),
        sick=lambda: (with_torch(CRASH), node),
        hung=lambda: (with_torch(HANG, timeout_s=2.0), node),
        not_applicable=lambda: (kind(), NodeTarget(name="cpu-only")),
    )


class TestProbe(ProbeSuite):
    @pytest.fixture(params=["command", "gpu", "cuda", "nccl"])
    def probe_case(self, request: pytest.FixtureRequest, tmp_path) -> ProbeCase:
        if request.param == "command":
            return _command_case()
        if request.param == "gpu":
            return _gpu_case(request.getfixturevalue("fake_smi"))
        request.getfixturevalue("nvidia_driver")
        return _torch_case(CudaProbe if request.param == "cuda" else NcclProbe, tmp_path)
