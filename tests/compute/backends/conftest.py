"""Backend fixtures: one Ray cluster per test session, and `start` for the backend under test.

`ray_cluster` starts a head node with 2 logical GPUs (ray.cluster_utils.Cluster) in a
private RAY_TMPDIR, so no other Ray user on this machine finds it by `ray.init()`, and
daemons reach it by its address; the head also serves Ray Client (`ray_client_address`,
as `ray start --head` does). Multi-node tests add worker nodes to it and remove them
again. `start(**settings)` starts a daemon on the backend of the `backend` param:
`local` (node `local`, 2 GPU slots) or `ray` (the cluster's head, 2 logical GPUs).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from compute import Client, Node
from tests.compute.s3_server import CREDENTIALS, S3Server, s3_server

_REPO = str(Path(__file__).resolve().parents[3])
BACKENDS = ["local", pytest.param("ray", marks=pytest.mark.ray)]


@pytest.fixture(scope="session")
def s3() -> Iterator[S3Server]:
    """A local S3-compatible server (moto) for the session: `s3.bucket()` gives a fresh `--storage` URI."""
    with s3_server() as server:
        yield server


@pytest.fixture(scope="session")
def ray_client_port() -> int:
    """A free port for the session head's Ray Client server."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def ray_cluster(ray_client_port: int) -> Iterator[Any]:
    """A one-node Ray cluster (head: 2 CPUs, 2 logical GPUs) for the whole session."""
    tmp = tempfile.mkdtemp(prefix="array-", dir="/tmp")
    saved = {k: os.environ.get(k) for k in ("RAY_TMPDIR", "RAY_AUTH_MODE", "RAY_ADDRESS", *CREDENTIALS)}
    os.environ.update(RAY_TMPDIR=tmp, RAY_AUTH_MODE="disabled", **CREDENTIALS)  # the nodes reach the `s3` store
    os.environ.pop("RAY_ADDRESS", None)
    from ray.cluster_utils import Cluster

    # The head's processes can import `compute`, as on nodes with autoresearch installed: a
    # Ray Client driver does not pass the daemon's sys.path on to the workers.
    saved_path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [_REPO, saved_path]))
    try:
        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": 2, "num_gpus": 2, "include_dashboard": False, "object_store_memory": 80 * 1024 * 1024,
            "ray_client_server_port": ray_client_port})
    finally:
        if saved_path is None:
            os.environ.pop("PYTHONPATH")
        else:
            os.environ["PYTHONPATH"] = saved_path
    try:
        yield cluster
    finally:
        cluster.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="session")
def ray_client_address(ray_cluster: Any, ray_client_port: int) -> str:
    """`ray://HOST:PORT` of the session head's Ray Client server (as `ray start --head` serves it)."""
    return f"ray://{ray_cluster.head_node.node_ip_address}:{ray_client_port}"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def start(backend: str, start_compute: Callable[..., Client], request: pytest.FixtureRequest) -> Callable[..., Client]:
    """Factory: a daemon on the backend under test, whose one node has 2 GPU slots -> Client."""
    if backend == "ray":
        cluster = request.getfixturevalue("ray_cluster")
        base: dict[str, Any] = {"backend": "ray", "ray_address": cluster.address, "gpus": None}
    else:
        base = {"gpus": 2}
    return lambda **settings: start_compute(**{**base, **settings})


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Any]:
    """`autoresearch ARGS...` in-process on a private home (`.home`); its daemon is stopped after."""
    from click.testing import CliRunner

    from autoresearch.cli import _register, app
    from compute import ComputePaths
    from compute.control import daemon_pid, stop_daemon

    _register()
    runner = CliRunner()
    home = tmp_path / "home"

    def run(*args: str) -> Any:
        return runner.invoke(app, list(args), env={"AUTORESEARCH_HOME": str(home)})

    run.home = home  # type: ignore[attr-defined]
    yield run
    if daemon_pid(ComputePaths.of(home)) is not None:
        stop_daemon(home, stop_jobs=True)


HARNESSES = ["local", pytest.param("ray", marks=pytest.mark.ray), "fake"]


@pytest.fixture(params=HARNESSES)
def backend_harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """The protocol suite's harness on local, ray (the session cluster) and the in-memory FakeBackend."""
    from compute.backends.local import LocalBackend
    from compute.testing import FakeBackend
    from compute.testing.backend_suite import FakeHarness, ShellHarness

    workdir = tmp_path / "work"
    workdir.mkdir()
    harness: Any
    if request.param == "local":
        def reopen() -> LocalBackend:
            return LocalBackend([Node(name="local", gpus=[0, 1])], tmp_path / "run")

        harness = ShellHarness(reopen(), workdir, reopen)
    elif request.param == "ray":
        cluster = request.getfixturevalue("ray_cluster")
        from compute.backends.ray import RayBackend

        def reopen_ray() -> RayBackend:
            return RayBackend(tmp_path / "home", cluster.address)

        harness = ShellHarness(reopen_ray(), workdir, reopen_ray)
    else:
        harness = FakeHarness(FakeBackend(), workdir)
    yield harness
    for key in ("suite-live.1", "suite-term.1"):  # a failed test may leave its endless attempt running
        try:
            harness.backend.signal(key, signal.SIGKILL)
        except KeyError:
            pass
    harness.backend.close()


@pytest.fixture(scope="session")
def netns_cluster() -> Iterator[Any]:
    """Ray nodes in network namespaces, one also in a mount namespace (netns_cluster.py), for the
    session: head (2 GPUs), w1 (1 GPU), priv (2 GPUs, sees neither the homes nor the job folders)."""
    from tests.compute.backends.netns_cluster import NetnsCluster, skip_reason

    why = skip_reason()
    if why is not None:
        pytest.skip(f"Ray nodes in namespaces: {why}")
    cluster = NetnsCluster()
    try:
        cluster.add_node("head", gpus=2)
        cluster.add_node("w1", gpus=1)
        cluster.add_node("priv", gpus=2, private=True)
        yield cluster
    finally:
        cluster.close()
