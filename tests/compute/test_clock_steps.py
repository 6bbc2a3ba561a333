"""Durations follow the boot clock, not the wall clock: a real daemon whose wall clock is stepped.

The daemon runs under libfaketime (Debian's `faketime`), which moves only its wall clock
(FAKETIME_DONT_FAKE_MONOTONIC=1) by the offset in a file the test rewrites: a step as NTP or
`date -s` makes it. Jobs do not inherit LD_PRELOAD, so each measures its own run time on the
host's boot clock (/proc/uptime) and prints it when the limit's SIGTERM reaches it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from compute import AttemptOutcome, Client, JobSpec, JobState
from compute.testing.jobs import log_so_far, log_text, wait_until

LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
TIMED = (
    "start=$(cut -d' ' -f1 /proc/uptime); "
    "trap 'echo \"ran $start $(cut -d\" \" -f1 /proc/uptime)\"; exit 143' TERM; "
    "echo started; while :; do sleep 0.1; done"
)
"""Runs until SIGTERM, then prints `ran START END` (host uptime in seconds at both)."""


@pytest.fixture
def wall_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file holding the daemon's wall-clock offset ("+0" until the test steps it)."""
    if not LIBFAKETIME.exists():
        pytest.skip("libfaketime is missing: apt-get install -y faketime")
    offset = tmp_path / "faketime"
    offset.write_text("+0\n")
    monkeypatch.setenv("LD_PRELOAD", str(LIBFAKETIME))
    monkeypatch.setenv("FAKETIME_TIMESTAMP_FILE", str(offset))
    monkeypatch.setenv("FAKETIME_NO_CACHE", "1")
    monkeypatch.setenv("FAKETIME_DONT_FAKE_MONOTONIC", "1")
    return offset


def _step(offset: Path, step: str) -> None:
    """Step the daemon's wall clock: the offset file is replaced at once (libfaketime rereads it on
    every clock call, so a file rewritten in place could be read half-written)."""
    new = offset.with_suffix(".new")
    new.write_text(f"{step}\n")
    new.replace(offset)


def _ran_s(client: Client, job_id: str) -> float:
    start, end = log_text(client, job_id).split("ran ")[1].split()
    return float(end) - float(start)


@pytest.mark.parametrize("step", ["+3h", "-2h"])
def test_a_time_limit_fires_after_its_elapsed_time_whichever_way_the_wall_clock_steps(
        start_compute: Callable[..., Client], wall_clock: Path, step: str) -> None:
    client = start_compute()
    job = client.submit(JobSpec(argv=["sh", "-c", TIMED], time_limit_s=4, grace_s=30, max_retries=0))
    wait_until(lambda: "started" in log_so_far(client, job.id), what="the job to start")
    _step(wall_clock, step)
    done = client.wait(job.id, timeout=60)[0]  # -2h: before the fix, the limit never fired
    assert (done.state, done.attempts[0].outcome) == (JobState.failed, AttemptOutcome.timed_out), done.state_reason
    # It starts its watch a moment after the daemon started the attempt: a second of slack for that.
    assert _ran_s(client, job.id) >= 3, f"stopped before its 4 s limit had elapsed (clock stepped {step})"


BACKOFF = (
    'echo "at $(cut -d" " -f1 /proc/uptime)"; '
    '[ "$AR_ATTEMPT" = 2 ] && exit 0; while [ ! -e "$GATE" ]; do sleep 0.05; done; exit 1'
)
"""Prints the host uptime as it starts; attempt 1 fails once the file $GATE exists, attempt 2 succeeds."""


@pytest.mark.parametrize("step", ["+3h", "-2h"])
def test_a_retry_backoff_lasts_its_time_whichever_way_the_wall_clock_steps(
        start_compute: Callable[..., Client], wall_clock: Path, tmp_path: Path, step: str) -> None:
    client = start_compute()
    gate = tmp_path / "gate"
    job = client.submit(JobSpec(argv=["sh", "-c", BACKOFF], env={"GATE": str(gate)}, max_retries=1, retry_backoff_s=4))
    wait_until(lambda: "at " in log_so_far(client, job.id), what="attempt 1 to start")
    gate.touch()
    wait_until(lambda: client.get(job.id).attempts[0].outcome is not None, what="attempt 1 to fail")
    failed_at = float(Path("/proc/uptime").read_text().split()[0])  # a moment after it failed
    _step(wall_clock, step)  # during the backoff (4 s, jitter 0.5-1.5: at least 2 s)
    done = client.wait(job.id, timeout=60)[0]  # -2h: before the fix, the retry waited two hours
    assert done.state == JobState.succeeded and len(done.attempts) == 2
    retried_at = float(log_text(client, job.id, 2).split("at ")[1].split()[0])
    assert retried_at - failed_at >= 1.5, f"retried {retried_at - failed_at:.2f} s after the failure (clock stepped {step})"


def test_a_daemon_on_another_boot_forgets_the_boot_clock_readings(tmp_path: Path) -> None:
    """Readings of CLOCK_BOOTTIME from an earlier boot mean nothing now: the wall values count."""
    from compute import ComputePaths, Store
    from compute.lifecycle import daemon_event, forget_other_boots

    store = Store(ComputePaths.of(tmp_path / "home"))
    try:
        job = store.submit(JobSpec(argv=["true"]))
        with store.transaction() as conn:
            conn.execute("UPDATE jobs SET state='pending', not_before=1, not_before_boot=5 WHERE id=?", (job.id,))
        daemon_event(store, "daemon_started", "pid 1", data={"boot_id": "an-earlier-boot"})
        forget_other_boots(store)
        assert store.read("SELECT not_before_boot FROM jobs WHERE id=?", (job.id,))[0][0] is None
    finally:
        store.close()
