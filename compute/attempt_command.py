"""What an attempt runs: the spec's argv, through `sh -c` and/or its container."""

from __future__ import annotations

from compute.container import (
    ContainerMounts,
    ContainerRun,
    ContainerRuntime,
    container_argv,
    container_name,
)
from compute.spec import JobSpec


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
