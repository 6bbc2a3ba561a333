"""Run a job's argv inside its image: the docker or podman command line, and what names it.

Every attempt's container is named `ar-<job id>-<attempt>` (`container_name`), runs with
`--init` (so SIGTERM reaches the command, not an init-less PID 1 that ignores it), and is
not started with `--rm`: the backend reads how it ended and removes it afterwards
(`compute/container_ops.py`). Paths mean the same inside and out: the cwd, the checkpoint
dir (and so a code-edit trial's workspace, its cwd) are mounted at their own paths; datasets are mounted read-only at
`/data/<name>`. Environment variables go by name only (`-e KEY`): the runtime client reads
their values from its own environment, so values never appear in a process listing.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from compute.jobenv import CUDA_VISIBLE_DEVICES

_IMAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+-]*")
_USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?")
DATA_MOUNT_ROOT = "/data"
"""Datasets are mounted read-only at `/data/<name>` inside containers."""


class ContainerRuntime(str, enum.Enum):
    """The container CLI that runs image jobs."""

    docker = "docker"
    podman = "podman"


def validate_image(image: str) -> str:
    """An image reference (`local/busybox`, `ghcr.io/x/y:1.2`, `img@sha256:...`), or ValueError.

    Nothing that starts with `-` (it would be read as a runtime option such as `--privileged`),
    no whitespace, no control characters.
    """
    if not image or image.startswith("-") or not _IMAGE.fullmatch(image):
        raise ValueError(
            f"image {image!r} is not an image reference: use a name such as 'local/busybox' or "
            "'ghcr.io/org/train:1.2' (letters, digits and ._/:@+-; it must not start with '-')"
        )
    return image


def validate_user(user: str) -> str:
    """A container user (`1000:1000`, `alice`), or ValueError (nothing that starts with `-`)."""
    if not _USER.fullmatch(user):
        raise ValueError(f"user {user!r} must be 'UID:GID', 'UID' or a user name (it must not start with '-')")
    return user


def container_name(job_id: str, attempt: int) -> str:
    """The name of one attempt's container: `ar-<job id>-<attempt>`."""
    return f"ar-{job_id}-{attempt}"


@dataclass(frozen=True)
class ContainerRun:
    """One attempt's container, as its backend needs it to stop, adopt and remove it."""

    runtime: ContainerRuntime
    """The CLI that started it."""
    name: str
    """`ar-<job id>-<attempt>`."""
    grace_s: float
    """Seconds `stop -t` waits between SIGTERM and SIGKILL."""


@dataclass(frozen=True)
class ContainerMounts:
    """What an attempt's container sees of the host."""

    cwd: str
    """Mounted read-write at the same path, and the working directory."""
    checkpoint_dir: str
    """Mounted read-write at the same path (AR_CHECKPOINT_DIR)."""
    data: Mapping[str, str] = field(default_factory=dict)
    """Dataset name -> host path, mounted read-only at `/data/<name>`."""


def container_argv(
    runtime: ContainerRuntime | str,
    image: str,
    argv: Sequence[str],
    *,
    name: str,
    gpus: Sequence[int],
    mounts: ContainerMounts,
    env_keys: Sequence[str],
    user: str | None = None,
) -> list[str]:
    """`docker run --name NAME --init [--user U] [--gpus "device=0,1"] -v ... -w CWD -e KEY ... IMAGE ARGV`.

    `gpus` are real device indices to expose (pass none for virtual slots: the job then sees
    only CUDA_VISIBLE_DEVICES). docker gets `--gpus "device=0,1"`; podman one
    `--device nvidia.com/gpu=N` (CDI) per GPU. CUDA_VISIBLE_DEVICES is not passed with real
    GPUs (inside, the runtime exposes exactly the assigned ones), and is passed otherwise.
    """
    runtime = ContainerRuntime(runtime)
    validate_image(image)
    out = [runtime.value, "run", "--name", name, "--init"]
    if user is not None:
        out += ["--user", validate_user(user)]
    if gpus:
        if runtime is ContainerRuntime.docker:
            out += ["--gpus", '"device=' + ",".join(str(g) for g in gpus) + '"']
        else:
            for g in gpus:
                out += ["--device", f"nvidia.com/gpu={g}"]
    out += ["-v", f"{mounts.cwd}:{mounts.cwd}", "-w", mounts.cwd]
    if mounts.checkpoint_dir != mounts.cwd:
        out += ["-v", f"{mounts.checkpoint_dir}:{mounts.checkpoint_dir}"]
    for data_name, path in mounts.data.items():
        out += ["-v", f"{path}:{DATA_MOUNT_ROOT}/{data_name}:ro"]
    for key in env_keys:
        if not (gpus and key == CUDA_VISIBLE_DEVICES.name):
            out += ["-e", key]
    return [*out, image, *argv]
