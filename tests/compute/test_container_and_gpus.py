"""Container argv (what runs it for real: tests/compute/containers) and GPU slot planning."""

from __future__ import annotations

import os
import stat

import pytest

from compute import ComputeError, ContainerMounts, JobSpec, attempt_argv, container_argv, detect_gpus, plan_nodes


def test_docker_argv_names_the_container_mounts_cwd_checkpoints_and_data_and_passes_env_by_name():
    mounts = ContainerMounts("/work/exp", "/home/u/ckpt/job-1", {"train": "/datasets/train.bin"})
    argv = container_argv("docker", "pytorch:2", ["python", "train.py", "--lr", "0.1"], name="ar-job-1-1",
                          gpus=[0, 1], mounts=mounts, env_keys=["AR_JOB_ID", "CUDA_VISIBLE_DEVICES", "SEED"],
                          user="1000:1000")
    assert argv == [
        "docker", "run", "--name", "ar-job-1-1", "--init", "--user", "1000:1000", "--gpus", '"device=0,1"',
        "-v", "/work/exp:/work/exp", "-w", "/work/exp", "-v", "/home/u/ckpt/job-1:/home/u/ckpt/job-1",
        "-v", "/datasets/train.bin:/data/train:ro",
        "-e", "AR_JOB_ID", "-e", "SEED",
        "pytorch:2", "python", "train.py", "--lr", "0.1",
    ]


def test_podman_argv_uses_cdi_devices_and_virtual_slots_get_only_cuda_visible_devices():
    mounts = ContainerMounts("/w", "/c")
    argv = container_argv("podman", "img", ["run"], name="n", gpus=[2, 3], mounts=mounts, env_keys=[])
    assert argv[:8] == ["podman", "run", "--name", "n", "--init", "--device", "nvidia.com/gpu=2", "--device"]
    cpu = container_argv("docker", "img", ["run"], name="n", gpus=[], mounts=mounts, env_keys=["CUDA_VISIBLE_DEVICES"])
    assert "--gpus" not in cpu and cpu[-4:] == ["-e", "CUDA_VISIBLE_DEVICES", "img", "run"]


def test_the_daemon_wraps_image_jobs_and_shell_strings():
    spec = JobSpec(argv="python train.py && echo done", shell=True, image="img:1", container_runtime="podman")
    argv = attempt_argv(spec, (1,), "/w", "/c", {"AR_ATTEMPT": "1"}, name="ar-j-1")
    assert argv[0] == "podman" and argv[-4:] == ["img:1", "/bin/sh", "-c", "python train.py && echo done"]
    assert "--device" not in argv  # slot 1 is not a real GPU here
    plain = JobSpec(argv=["python", "a b.py"])
    assert attempt_argv(plain, (), "/w", "/c", {}) == ["python", "a b.py"]


def test_default_node_has_detected_gpus_or_four_virtual_slots_and_says_which():
    assert [(n.name, n.gpus, n.virtual) for n in plan_nodes(detected=[])] == [("local", [0, 1, 2, 3], True)]
    assert [(n.gpus, n.virtual) for n in plan_nodes(detected=[0, 1, 2, 3, 4, 5, 6, 7], gpus=2)] == [([0, 1], False)]
    assert [(n.gpus, n.virtual) for n in plan_nodes(detected=[4, 5])] == [([4, 5], False)]
    assert [(n.gpus, n.virtual) for n in plan_nodes(detected=[], gpus=6)] == [(list(range(6)), True)]
    assert [(n.gpus, n.virtual) for n in plan_nodes(detected=[0], gpus=2)] == [([0, 1], True)]  # slot 1 has no GPU
    nodes = plan_nodes(virtual_nodes=3, gpus_per_node=2, detected=[])
    assert [(n.name, n.gpus, n.virtual) for n in nodes] == [
        ("local-0", [0, 1], True), ("local-1", [2, 3], True), ("local-2", [4, 5], True)]


def test_inconsistent_gpu_flags_are_refused_with_the_fix():
    with pytest.raises(ComputeError, match="--gpus 5 disagrees with --virtual-nodes 2 x --gpus-per-node 2"):
        plan_nodes(gpus=5, virtual_nodes=2, gpus_per_node=2, detected=[])
    with pytest.raises(ComputeError, match="needs --virtual-nodes"):
        plan_nodes(gpus_per_node=2, detected=[])


def test_detect_gpus_reads_nvidia_smi(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"  # no GPU here: a stand-in that prints what the real one does
    fake.write_text('#!/bin/sh\nprintf "0\\n1\\n"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert detect_gpus() == [0, 1]
    fake.write_text("#!/bin/sh\necho 'NVIDIA-SMI has failed' >&2; exit 9\n")
    assert detect_gpus() == []
