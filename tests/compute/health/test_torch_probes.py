"""The cuda and nccl probes: skipping without torch, judging results, the subprocess contract."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from compute.health import CudaProbe, NcclProbe, NodeTarget, cuda_checks, nccl_applies, nccl_checks
from compute.records import HealthStatus

NODE = NodeTarget(name="n", gpus=(2, 3))
NO_TORCH = importlib.util.find_spec("torch") is None


@pytest.mark.skipif(not NO_TORCH, reason="checks the no-torch path")
@pytest.mark.parametrize("probe", [CudaProbe(), NcclProbe()])
def test_skipped_cleanly_without_torch(probe, nvidia_driver):
    report = probe.probe(NODE)
    assert report.status is HealthStatus.ok
    assert report.checks[0].message == "skipped: torch is not installed"


def test_skipped_on_a_node_without_gpus():
    assert CudaProbe().probe(NodeTarget(name="cpu")).checks[0].message == "skipped: node has no GPUs"


def test_a_host_without_an_nvidia_driver_starts_no_torch_check(tmp_path, python, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    env = fake_torch(tmp_path, "raise SystemExit('the check ran')\n")
    for target in (NODE, NodeTarget(name="local-0", gpus=(0,), virtual=True)):
        report = CudaProbe(timeout_s=60, python=python, env=env).probe(target)
        assert report.status is HealthStatus.ok
        assert report.checks[0].message == "skipped: no nvidia-smi (not on PATH: no NVIDIA GPU or driver here)"


def fake_torch(tmp_path, body: str) -> dict[str, str]:
    """A `torch` stand-in on PYTHONPATH (no GPU or torch here) for the check script's subprocess."""
    pkg = tmp_path / "fake" / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(body)
    return {"PYTHONPATH": str(tmp_path / "fake")}


@pytest.fixture
def python(tmp_path) -> str:
    """This interpreter under another path, so the probe runs its script instead of skipping early."""
    link = tmp_path / "python"
    link.symlink_to(sys.executable)
    return str(link)


def test_the_check_script_reports_torch_without_cuda_as_skipped(tmp_path, python, nvidia_driver):
    env = fake_torch(tmp_path, "class cuda:\n    @staticmethod\n    def is_available():\n        return False\n")
    for probe in (CudaProbe(timeout_s=60, python=python, env=env), NcclProbe(timeout_s=60, python=python, env=env)):
        report = probe.probe(NODE)
        assert report.status is HealthStatus.ok
        assert report.checks[0].message == "skipped: torch has no CUDA device (torch.cuda.is_available() is False)"


def test_a_check_that_crashes_is_critical(tmp_path, python, nvidia_driver):
    env = fake_torch(tmp_path, "raise SystemExit('CUDA driver initialization failed, no CUDA GPU.')\n")
    report = NcclProbe(timeout_s=60, env=env, python=python).probe(NODE)
    assert report.status is HealthStatus.critical
    assert "CUDA driver initialization failed" in report.checks[0].message


def test_a_check_that_hangs_is_critical(tmp_path, python, nvidia_driver):
    env = fake_torch(tmp_path, "import time\ntime.sleep(600)\n")
    report = CudaProbe(timeout_s=2, env=env, python=python).probe(NODE)
    assert report.status is HealthStatus.critical
    assert "hung for 2 s" in report.checks[0].message


def test_cuda_checks_judge_each_gpu():
    result = {"devices": [{"device": 0, "rel_err": 2e-7, "seconds": 0.004},
                          {"device": 1, "rel_err": 0.3, "seconds": 0.004}]}
    checks = {c.name: c for c in cuda_checks(result, NODE)}
    assert checks["gpu2.matmul"].status is HealthStatus.ok
    assert checks["gpu3.matmul"].status is HealthStatus.critical
    assert "silent data corruption" in checks["gpu3.matmul"].message


def test_cuda_checks_catch_missing_gpus_and_errors():
    result = {"devices": [{"device": 0, "error": "RuntimeError: CUDA error: uncorrectable ECC error encountered"}]}
    statuses = {c.name: c.status for c in cuda_checks(result, NODE)}
    assert statuses == {"device_count": HealthStatus.critical, "gpu2.matmul": HealthStatus.critical}


def test_a_gpu_whose_memory_a_job_holds_is_skipped_not_critical():
    result = {"devices": [{"device": 0, "busy": "OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 MiB"},
                          {"device": 1, "rel_err": 1e-7, "seconds": 0.003}]}
    checks = {c.name: c for c in cuda_checks(result, NODE)}
    assert checks["gpu2.matmul"].status is HealthStatus.ok and "GPU busy" in checks["gpu2.matmul"].message


def test_cuda_checks_on_a_virtual_node_skip_slots_without_a_gpu():
    result = {"devices": [{"device": 0, "rel_err": 1e-7, "seconds": 0.003}]}
    checks = cuda_checks(result, NodeTarget(name="local-1", gpus=(4, 5), virtual=True))
    assert [c.status for c in checks] == [HealthStatus.ok, HealthStatus.ok]


def test_nccl_checks_apply_the_bandwidth_floor():
    fast = nccl_checks({"world_size": 8, "busbw_gbps": 182.5, "correct": True}, min_busbw_gbps=100)
    slow = nccl_checks({"world_size": 8, "busbw_gbps": 11.2, "correct": True}, min_busbw_gbps=100)
    wrong = nccl_checks({"world_size": 2, "busbw_gbps": 150.0, "correct": False}, min_busbw_gbps=100)
    assert [c.status for c in fast] == [HealthStatus.ok]
    assert [c.status for c in slow] == [HealthStatus.critical] and "below the 100 GB/s floor" in slow[0].message
    assert HealthStatus.critical in [c.status for c in wrong]
    assert nccl_checks({"error": "ProcessRaisedException: NCCL error"}, 100)[0].status is HealthStatus.critical


@pytest.mark.parametrize(("job_gpus", "node_gpus", "applies"), [(1, 8, False), (2, 8, True), (4, 1, False),
                                                                (0, 8, False)])
def test_nccl_applies_only_to_multi_gpu_jobs(job_gpus, node_gpus, applies):
    assert nccl_applies(job_gpus, NodeTarget(name="n", gpus=tuple(range(node_gpus)))) is applies
