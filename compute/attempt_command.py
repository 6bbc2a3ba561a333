"""What an attempt runs: the spec's argv, through `sh -c` and/or its container."""

from __future__ import annotations

from compute.container import (
    ContainerMounts,
    ContainerRun,
    ContainerRuntime,
    container_argv,
    container_name,
)
from compute.data import data_env
from compute.jobenv import AR_ATTEMPT, AR_CHECKPOINT_DIR, AR_JOB_ID, AR_NODE, CUDA_VISIBLE_DEVICES, secret_values
from compute.spec import JobSpec


def attempt_env(spec: JobSpec, job_id: str, number: int, gpus: tuple[int, ...], checkpoint_dir: str,
                node: str = "") -> tuple[dict[str, str], str | None]:
    """The variables an attempt gets on top of the allowlisted base (compute/jobenv.py): its
    secrets by name, the spec's env, its GPUs, ids, checkpoint dir, node (AR_NODE) and datasets;
    plus the name of a `secret_env` entry the daemon's environment lacks (None when all are there)."""
    try:
        secrets, missing = secret_values(spec.secret_env), None
    except KeyError as err:
        secrets, missing = {}, err.args[0]
    env = {
        **secrets,
        **spec.env,
        CUDA_VISIBLE_DEVICES.name: ",".join(str(g) for g in gpus),
        AR_JOB_ID.name: job_id,
        AR_ATTEMPT.name: str(number),
        AR_CHECKPOINT_DIR.name: checkpoint_dir,
        **({AR_NODE.name: node} if node else {}),
        **data_env(spec.data, in_container=spec.image is not None),
    }
    return env, missing


def container_run(spec: JobSpec, job_id: str, number: int, host_grace_s: float) -> ContainerRun | None:
    """The container of attempt `number` of an image job (None without an image)."""
    if spec.image is None:
        return None
    grace = host_grace_s if spec.grace_s is None else spec.grace_s
    return ContainerRun(ContainerRuntime(spec.container_runtime), container_name(job_id, number), grace)


def attempt_argv(spec: JobSpec, gpus: tuple[int, ...], cwd: str, checkpoint_dir: str, env: dict[str, str],
                 *, name: str = "ar-job", real_gpus: bool = False) -> list[str]:
    """The command to launch: the spec's argv, through `sh -c` and/or a container when asked.

    A container (named `name`) gets the GPUs only when `real_gpus`; else CUDA_VISIBLE_DEVICES only."""
    argv = ["/bin/sh", "-c", spec.argv] if isinstance(spec.argv, str) else list(spec.argv)
    if spec.image is None:
        return argv
    return container_argv(spec.container_runtime, spec.image, argv, name=name, gpus=gpus if real_gpus else (),
                          mounts=ContainerMounts(cwd, checkpoint_dir, spec.data), env_keys=list(env),
                          user=spec.user)
