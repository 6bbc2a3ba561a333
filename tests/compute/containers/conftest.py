"""Real docker and podman for the container tests, set up once per test session.

`.ci/containers.sh setup` (idempotent) installs the runtimes when missing, starts dockerd
when no daemon answers, and imports the `local/busybox` and `local/python` images. A dockerd
started here is stopped at the end of the session. The session ends with a check that no
test left a container of ours (`ar-*`), a container mount or that dockerd behind.

Where the runtimes cannot be set up (not root, no apt), the tests skip with the reason;
with AR_REQUIRE_CONTAINERS=1 (set by `.ci/run`) they fail instead: CI must run them.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SETUP = REPO / ".ci" / "containers.sh"
RUNTIMES = ("docker", "podman")
BUSYBOX, PYTHON = "local/busybox", "local/python"


def _answers(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def our_containers(runtime: str) -> list[str]:
    """Names of containers named like ours (`ar-*`), running or not."""
    out = subprocess.run([runtime, "ps", "-a", "--format", "{{.Names}}"], capture_output=True, text=True,
                         timeout=60).stdout
    return [n for n in out.split() if n.startswith("ar-")]


DOCKER_ROOT = os.path.join(os.environ.get("AR_CONTAINERS_STATE", "/var/lib/ar-containers"), "docker")
PODMAN_ROOT = "/var/lib/containers/storage"


def running_containers(runtime: str) -> list[str]:
    """Names of running containers."""
    out = subprocess.run([runtime, "ps", "--format", "{{.Names}}"], capture_output=True, text=True,
                         timeout=60, check=False).stdout
    return out.split()


def container_mounts() -> list[str]:
    """Mounts of containers (overlay root filesystems, shm) under docker's data root or podman's
    storage; the data root itself (dockerd bind-mounts it while it runs) does not count."""
    targets = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    return [t for t in targets
            if t.startswith((DOCKER_ROOT + "/", PODMAN_ROOT + "/")) and t.rsplit("/", 1)[-1] in ("merged", "shm")]


@pytest.fixture(scope="session")
def container_runtimes() -> Iterator[tuple[str, ...]]:
    """Both runtimes, ready with both images (or a skip saying why not)."""
    dockerd_was_up = _answers(["docker", "info"])
    problem = None
    if os.geteuid() != 0:
        problem = "the container tests need root (apt-get, dockerd): run them as root, as CI does"
    else:
        done = subprocess.run([str(SETUP), "setup"], capture_output=True, text=True, timeout=900)
        if done.returncode != 0:
            problem = f"{SETUP} setup failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}"
    if problem is not None:
        if os.environ.get("AR_REQUIRE_CONTAINERS") == "1":
            pytest.fail(problem)
        pytest.skip(problem)
    yield RUNTIMES
    leftovers = {r: our_containers(r) for r in RUNTIMES}
    mounts = container_mounts()
    if not dockerd_was_up:
        subprocess.run([str(SETUP), "stop"], timeout=120)
    dockerd_left = not dockerd_was_up and _answers(["docker", "info"])
    assert not any(leftovers.values()), f"tests left containers behind: {leftovers}"
    assert not mounts, f"tests left container mounts behind: {mounts}"
    assert not dockerd_left, "the dockerd this session started still answers after `containers.sh stop`"


@pytest.fixture(params=RUNTIMES)
def runtime(request: pytest.FixtureRequest, container_runtimes: tuple[str, ...]) -> str:
    """Each test runs once with docker and once with podman."""
    return request.param
