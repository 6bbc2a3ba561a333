"""The gang preflight: when it runs (`plan`), what the members' results say (`verdict`), and the
script itself as real processes (a rendezvous and a gloo all-reduce on CPU; nccl paths with an
nvidia-smi stand-in and torch without CUDA)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from compute.health import Classifier, NodeTarget
from compute.health.gang_preflight import FAILED_MARKER, GangPreflightMode, plan, result_path, verdict, wrap
from compute.records import FailureClass

REAL = [NodeTarget(name="gpu-a", gpus=(0, 1)), NodeTarget(name="gpu-b", gpus=(0, 1))]
VIRTUAL = [NodeTarget(name="local-0", gpus=(0,), virtual=True), NodeTarget(name="local-1", gpus=(1,), virtual=True)]


def test_auto_runs_nccl_where_gpus_are_real_and_skips_virtual_slots():
    assert plan(GangPreflightMode.auto, REAL, 60).backend == "nccl"
    skipped = plan(GangPreflightMode.auto, VIRTUAL, 60)
    assert skipped.backend is None and skipped.reason.startswith("gang preflight skipped: virtual GPUs (local-0, local-1")
    assert plan(GangPreflightMode.always, VIRTUAL, 60).backend == "gloo"
    assert plan(GangPreflightMode.always, REAL, 60).backend == "nccl"
    assert plan(GangPreflightMode.off, REAL, 60).backend is None


def write(log: Path, **result) -> str:
    Path(result_path(str(log))).write_text(json.dumps({"ok": True, "skipped": False, "blame": None, "message": "m",
                                                       "seconds": 0.5, **result}))
    return str(log)


def test_the_verdict_waits_for_every_member_and_blames_the_rank_at_fault(tmp_path):
    logs = [str(tmp_path / "r0.log"), str(tmp_path / "r1.log"), str(tmp_path / "r2.log")]
    nodes = ["a", "b", "c"]
    write(tmp_path / "r0.log", rank=0)
    assert verdict(logs, nodes) is None  # ranks 1 and 2 have not answered
    write(tmp_path / "r0.log", rank=0, ok=False, blame=2, message="rank 2 never joined")
    accused = verdict(logs, nodes)
    assert (accused.passed, accused.blame) == (False, 2)
    assert accused.reason == "gang preflight failed on rank 2 (c) (rank 0 reports): rank 2 never joined"
    write(tmp_path / "r1.log", rank=1, ok=False, blame=1, message="NCCL error")
    assert verdict(logs, nodes).blame == 1  # a member that blames itself wins over an accusation
    for rank in range(3):
        write(tmp_path / f"r{rank}.log", rank=rank, skipped=rank == 1, message="no nvidia-smi")
    skipped = verdict(logs, nodes)
    assert (skipped.passed, skipped.skipped, skipped.reason) == (True, True, "gang preflight skipped on rank 1 (b): no nvidia-smi")


def test_a_failure_line_classifies_the_attempt_as_infra():
    found = Classifier().classify(1, f"{FAILED_MARKER} on rank 1 (b): all-reduce (nccl) failed\n")
    assert (found.failure_class, found.rule) == (FailureClass.infra, "gang_preflight")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def member(tmp_path: Path, rank: int, world: int, port: int, backend: str, argv: list[str], timeout: float = 30,
           **popen) -> subprocess.Popen:
    argv = wrap(argv, sys.executable, rank=rank, world=world, master=("127.0.0.1", port), backend=backend,
                timeout_s=timeout, log_path=str(tmp_path / f"r{rank}.log"))
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen)


def result(tmp_path: Path, rank: int) -> dict:
    return json.loads(Path(result_path(str(tmp_path / f"r{rank}.log"))).read_text())


def test_without_nvidia_smi_an_nccl_preflight_is_skipped_and_the_argv_runs_with_its_exit_code(tmp_path):
    proc = member(tmp_path, 0, 2, free_port(), "nccl", ["sh", "-c", "echo ran; exit 7"], env={"PATH": "/usr/bin:/bin"})
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 7 and out == "ran\n"  # the job's log as it would be without the preflight
    got = result(tmp_path, 0)
    assert got["skipped"] is True and got["message"].startswith("no nvidia-smi on this node")


@pytest.mark.torch
def test_two_members_all_reduce_with_gloo_then_exec_their_argv(tmp_path):
    pytest.importorskip("torch")
    port = free_port()
    procs = [member(tmp_path, r, 2, port, "gloo", ["sh", "-c", f"echo rank {r} ran"]) for r in (0, 1)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    for r, out in enumerate(outs):
        assert f"gang preflight passed on rank {r}: all-reduce (gloo) across 2 nodes gave 3 as expected" in out
        assert out.splitlines()[-1] == f"rank {r} ran"


@pytest.mark.torch
def test_rank_0_names_the_rank_that_never_joined_and_the_argv_does_not_run(tmp_path):
    pytest.importorskip("torch")
    proc = member(tmp_path, 0, 2, free_port(), "gloo", ["sh", "-c", "echo ran"], timeout=3)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "ran" not in out.splitlines()
    assert f"{FAILED_MARKER} on rank 0: rank 1 never joined" in out  # the words the classifier's rule matches
    got = result(tmp_path, 0)
    assert (got["ok"], got["blame"]) == (False, 1)
    assert got["message"].startswith("rank 1 never joined the rendezvous within 3 s")


@pytest.mark.torch
def test_nccl_where_nvidia_smi_is_present_but_torch_sees_no_cuda_fails_on_that_member(tmp_path, nvidia_driver):
    pytest.importorskip("torch")
    proc = member(tmp_path, 1, 2, free_port(), "nccl", ["sh", "-c", "echo ran"])
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "ran" not in out.splitlines()
    got = result(tmp_path, 1)
    assert (got["ok"], got["blame"]) == (False, 1) and "torch sees no CUDA device here" in got["message"]
