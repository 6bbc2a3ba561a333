"""A full disk or a store locked by another process: one clear error from the CLI (what happened,
which file, what to do; never a traceback), and a daemon that backs off instead of spinning and
recovers by itself once the disk has room. The disk is a real 16 MB tmpfs, the lock a real
`BEGIN EXCLUSIVE` held by another connection."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from compute import ComputePaths, JobSpec, JobState
from compute.errors import StoreTrouble, StoreUnavailable, store_unavailable

ROOT = Path(__file__).resolve().parents[2]


def _cli(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AUTORESEARCH_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", "from autoresearch.cli import main; main()", *args],
                          env=env, capture_output=True, text=True, timeout=timeout)  # fmt: skip


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MB tmpfs where `start_compute` puts its first home (tmp_path/arhome0)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (CI runs as root)")
    mount = tmp_path / "arhome0"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    try:  # the store and its write-ahead log may have taken the room already
        with open(filler, "wb") as f:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
    except OSError:
        pass
    return filler


def test_a_full_disk_is_one_clear_error_and_the_daemon_waits_then_recovers(small_disk: Path, start_compute) -> None:
    client = start_compute()
    assert client.home == small_disk
    running = client.submit(JobSpec(name="ends-on-a-full-disk", argv=["sleep", "1"], cwd="/"))
    filler = _fill(small_disk)

    refused = _cli(small_disk, "jobs", "submit", "--", "true")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "Traceback" not in refused.stderr
    assert f"{small_disk}/compute/store.db: the disk holding it is full" in refused.stderr, refused.stderr
    assert "df -h" in refused.stderr and "Nothing was changed" in refused.stderr

    # The running job ends while nothing can be recorded: the daemon backs off instead of spinning
    # on the ended process it cannot record (a CPU-time bound: load on the machine only lowers it).
    time.sleep(1.5)
    daemon = ComputePaths.of(small_disk).daemon_info
    pid = int(json.loads(daemon.read_text())["pid"])
    before = _cpu_s(pid)
    time.sleep(3)
    assert _cpu_s(pid) - before < 1.0, "the daemon spins on a full disk"

    filler.unlink(missing_ok=True)  # room again: the daemon records the ended job and takes new work by itself
    [ended] = client.wait([running.id], timeout=60)
    assert ended.state is JobState.succeeded
    after = _cli(small_disk, "jobs", "submit", "--", "true")
    assert after.returncode == 0, after.stderr
    [done] = client.wait([after.stdout.strip()], timeout=60)
    assert done.state is JobState.succeeded


@pytest.mark.slow
def test_a_store_locked_by_another_process_is_one_clear_error(start_compute) -> None:
    client = start_compute()
    holder = sqlite3.connect(client.paths.db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # e.g. a `sqlite3` shell left in a transaction
    try:
        refused = _cli(client.home, "jobs", "submit", "--", "true")  # waits out the 30 s busy timeout
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "Traceback" not in refused.stderr
    assert "another process held its lock too long" in refused.stderr and "fuser -v" in refused.stderr
    again = _cli(client.home, "jobs", "submit", "--", "true")
    assert again.returncode == 0, again.stderr
    [done] = client.wait([again.stdout.strip()], timeout=60)
    assert done.state is JobState.succeeded


def test_sqlite_trouble_is_read_from_its_error_code_not_its_text(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    first = sqlite3.connect(db, isolation_level=None)
    first.execute("CREATE TABLE t (x)")
    first.execute("BEGIN EXCLUSIVE")
    second = sqlite3.connect(db, timeout=0, isolation_level=None)
    with pytest.raises(sqlite3.OperationalError) as info:
        second.execute("INSERT INTO t VALUES (1)")
    found = store_unavailable(info.value, db)
    assert isinstance(found, StoreUnavailable) and found.trouble is StoreTrouble.locked
    with pytest.raises(sqlite3.OperationalError) as syntax:
        second.execute("SELEC 1")
    assert store_unavailable(syntax.value, db) is None  # a bug is not "unavailable"
