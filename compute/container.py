"""Build the docker or podman command line that runs a job's argv inside its image.

No container daemon runs on our test machines, so the argv built here is what is tested.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence


def container_argv(
    runtime: str,
    image: str,
    argv: Sequence[str],
    *,
    gpus: Sequence[int],
    cwd: str,
    checkpoint_dir: str,
    env: Mapping[str, str],
    secret_names: Collection[str] = (),
) -> list[str]:
    """`docker run --rm --gpus "device=0,1" -v CWD:CWD -w CWD -v CKPT:CKPT -e K=V ... IMAGE ARGV`.

    podman gets one `--device nvidia.com/gpu=N` (CDI) per GPU instead of `--gpus`.
    The cwd and the checkpoint dir are mounted at the same paths inside, so paths in
    argv and env mean the same thing in and out of the container. CUDA_VISIBLE_DEVICES
    is left out: inside, the runtime exposes exactly the assigned GPUs. Variables in
    `secret_names` go as `-e NAME` (the runtime reads the value from its own environment),
    so a credential never shows in the command line.
    """
    if runtime not in ("docker", "podman"):
        raise ValueError(f"container runtime must be 'docker' or 'podman', not {runtime!r}")
    out = [runtime, "run", "--rm"]
    if gpus:
        if runtime == "docker":
            out += ["--gpus", '"device=' + ",".join(str(g) for g in gpus) + '"']
        else:
            for g in gpus:
                out += ["--device", f"nvidia.com/gpu={g}"]
    out += ["-v", f"{cwd}:{cwd}", "-w", cwd]
    if checkpoint_dir != cwd:
        out += ["-v", f"{checkpoint_dir}:{checkpoint_dir}"]
    for key, value in env.items():
        if key in secret_names:
            out += ["-e", key]
        elif key != "CUDA_VISIBLE_DEVICES":
            out += ["-e", f"{key}={value}"]
    return [*out, image, *argv]
