"""`compute up --backend ray` with no address: the daemon starts its own local Ray instance
and stops it when it exits. (This file's name sorts first, so it runs before the session
cluster starts: one Ray instance at a time on the machine.)"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from compute import JobState, stop_daemon
from compute.control import daemon_info
from tests.compute.helpers import env_job, log_text, wait_until

pytestmark = pytest.mark.ray


def ray_processes(tmpdir: Path) -> list[int]:
    """Pids whose command line mentions this test's RAY_TMPDIR (the instance's own processes)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(tmpdir).encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@pytest.fixture
def short_tmpdir():
    """A RAY_TMPDIR short enough for Ray's socket paths (107 bytes at most)."""
    path = Path(tempfile.mkdtemp(prefix="arl-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_no_address_starts_a_local_instance_that_ends_with_the_daemon(start_compute, monkeypatch, short_tmpdir):
    tmpdir = short_tmpdir
    monkeypatch.setenv("RAY_TMPDIR", str(tmpdir))
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    client = start_compute(backend="ray", gpus=2)
    nodes = daemon_info(client.paths)["nodes"]
    assert [n["gpus"] for n in nodes] == [[0, 1]] and ray_processes(tmpdir)
    job = client.wait(client.submit(env_job(resources={"gpus": 2})).id, timeout=90)[0]
    assert job.state == JobState.succeeded and "CUDA_VISIBLE_DEVICES=0,1\n" in log_text(client, job.id)
    stop_daemon(client.home)
    wait_until(lambda: not ray_processes(tmpdir), timeout=60, what="the daemon's Ray instance to stop")
