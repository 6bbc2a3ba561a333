"""The cuda and nccl probes: torch work in a subprocess that sees only the node's GPUs.

The daemon never imports torch: the probes run `_torch_check.py` with the node's
CUDA_VISIBLE_DEVICES and judge its one JSON line (pure functions below), its exit status
and its timeout. A hung CUDA context or NCCL ring is a critical check, not a hung daemon.
"""

from __future__ import annotations

import abc
import importlib.util
import json
import os
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compute.health._proc import ProcResult, run_command, tail
from compute.health.report import Check, HealthReport, NodeTarget, skipped
from compute.jobenv import CUDA_VISIBLE_DEVICES
from compute.records import HealthStatus

SCRIPT = Path(__file__).with_name("_torch_check.py")


def nccl_applies(job_gpus: int, node: NodeTarget) -> bool:
    """Whether the nccl probe should pass before a job asking `job_gpus` GPUs starts on `node`."""
    return job_gpus >= 2 and len(node.gpus) >= 2


def _last_json(output: str) -> dict[str, Any] | None:
    for line in reversed(output.strip().splitlines()):
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


def cuda_checks(result: Mapping[str, Any], node: NodeTarget, max_rel_err: float = 1e-3) -> list[Check]:
    """Judge the cuda script's result: every GPU of the node computed the matmul right."""
    if "skipped" in result:
        return [skipped(str(result["skipped"]))]
    devices = list(result.get("devices", []))
    checks = []
    if len(devices) < len(node.gpus):
        checks.append(Check(
            name="device_count", status=HealthStatus.ok if node.virtual else HealthStatus.critical,
            value=len(devices), threshold=len(node.gpus),
            message=f"CUDA sees {len(devices)} of the node's {len(node.gpus)} GPUs"
            + (" (a virtual node: slots without a physical GPU are skipped)" if node.virtual else ""),
        ))
    for dev in devices:
        index = node.gpus[dev["device"]] if dev["device"] < len(node.gpus) else dev["device"]
        name = f"gpu{index}.matmul"
        if "error" in dev:
            checks.append(Check(name=name, status=HealthStatus.critical, message=str(dev["error"])))
        elif "busy" in dev:
            checks.append(Check(name=name, status=HealthStatus.ok, skipped="GPU busy",
                                message=f"skipped: GPU busy, no memory left for the check ({dev['busy']})"))
        elif dev["rel_err"] > max_rel_err:
            checks.append(Check(
                name=name, status=HealthStatus.critical, value=dev["rel_err"], threshold=max_rel_err,
                message=f"matmul result is wrong (relative error {dev['rel_err']:.2g}): silent data corruption",
            ))
        else:
            checks.append(Check(
                name=name, status=HealthStatus.ok, value=dev["rel_err"], threshold=max_rel_err,
                message=f"matmul right in {dev['seconds'] * 1000:.0f} ms",
            ))
    return checks


def nccl_checks(result: Mapping[str, Any], min_busbw_gbps: float) -> list[Check]:
    """Judge the nccl script's result: the all-reduce was right and fast enough."""
    if "skipped" in result:
        return [skipped(str(result["skipped"]))]
    if "error" in result:
        return [Check(name="all_reduce", status=HealthStatus.critical, message=str(result["error"]))]
    bw = float(result["busbw_gbps"])
    checks = [Check(
        name="busbw_gbps", status=HealthStatus.ok if bw >= min_busbw_gbps else HealthStatus.critical,
        value=round(bw, 2), threshold=min_busbw_gbps,
        message=f"all-reduce bus bandwidth {bw:.1f} GB/s over {result['world_size']} GPUs"
        + ("" if bw >= min_busbw_gbps else f", below the {min_busbw_gbps:g} GB/s floor (bad NVLink/PCIe?)"),
    )]
    if not result.get("correct", False):
        checks.append(Check(name="all_reduce", status=HealthStatus.critical, value=False, threshold=True,
                            message="all-reduce returned a wrong sum"))
    return checks


def _process_checks(what: str, proc: ProcResult, timeout_s: float) -> list[Check] | None:
    """Checks for a script that hung, could not start or died without a result; None if it answered."""
    if proc.timed_out:
        return [Check(name=what, status=HealthStatus.critical, threshold=timeout_s,
                      message=f"{what} check hung for {timeout_s:g} s and was killed: {tail(proc.output, 300)}")]
    if proc.exit_code is None:
        return [Check(name=what, status=HealthStatus.degraded, message=f"could not start: {proc.start_error}")]
    if _last_json(proc.output) is None:
        return [Check(name=what, status=HealthStatus.critical, value=proc.exit_code,
                      message=f"{what} check died (exit {proc.exit_code}): {tail(proc.output, 500)}")]
    return None


class _TorchProbe(abc.ABC):
    """Runs `_torch_check.py <check>` for a node; subclasses say which check and how to judge it."""

    name = ""

    def __init__(self, timeout_s: float, python: str = sys.executable, env: Mapping[str, str] | None = None):
        self.timeout_s = timeout_s
        self.python = python
        self.env = dict(env or {})
        """Extra environment for the check (e.g. NCCL_DEBUG=WARN)."""

    @abc.abstractmethod
    def _args(self) -> list[str]:
        """Arguments after the check name."""

    @abc.abstractmethod
    def _judge(self, result: Mapping[str, Any], node: NodeTarget) -> list[Check]:
        """Checks from the script's JSON result."""

    def probe(self, node: NodeTarget) -> HealthReport:
        started = time.time()
        checks = self._checks(node)
        return HealthReport.from_checks(node.name, self.name, checks, started, time.time() - started)

    def _checks(self, node: NodeTarget) -> list[Check]:
        if not node.gpus:
            return [skipped("node has no GPUs")]
        if shutil.which("nvidia-smi") is None:  # as the gpu probe: no driver, so no CUDA device to check
            return [skipped("no nvidia-smi", "not on PATH: no NVIDIA GPU or driver here")]
        if self.python == sys.executable and importlib.util.find_spec("torch") is None:
            return [skipped("torch is not installed")]
        env = {**os.environ, **self.env, CUDA_VISIBLE_DEVICES.name: ",".join(map(str, node.gpus))}
        proc = run_command([self.python, str(SCRIPT), self.name, *self._args()], self.timeout_s, env=env)
        bad = _process_checks(self.name, proc, self.timeout_s)
        return bad if bad is not None else self._judge(_last_json(proc.output) or {}, node)


class CudaProbe(_TorchProbe):
    """A small matmul on each of the node's GPUs, checked against the CPU result."""

    name = "cuda"

    def __init__(self, timeout_s: float = 120.0, size: int = 1024, max_rel_err: float = 1e-3, **kw: Any):
        super().__init__(timeout_s, **kw)
        self.size = size
        self.max_rel_err = max_rel_err

    def _args(self) -> list[str]:
        return ["--size", str(self.size)]

    def _judge(self, result: Mapping[str, Any], node: NodeTarget) -> list[Check]:
        return cuda_checks(result, node, self.max_rel_err)


class NcclProbe(_TorchProbe):
    """An all-reduce across the node's GPUs (one process each) with a bus-bandwidth floor."""

    name = "nccl"

    def __init__(self, timeout_s: float = 180.0, min_busbw_gbps: float = 10.0, size_mb: int = 64, iters: int = 10,
                 **kw: Any):
        super().__init__(timeout_s, **kw)
        self.min_busbw_gbps = min_busbw_gbps
        self.size_mb = size_mb
        self.iters = iters

    def _args(self) -> list[str]:
        return ["--size-mb", str(self.size_mb), "--iters", str(self.iters)]

    def _judge(self, result: Mapping[str, Any], node: NodeTarget) -> list[Check]:
        return nccl_checks(result, self.min_busbw_gbps)
