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


def _ran_s(client: Client, job_id: str) -> float:
    start, end = log_text(client, job_id).split("ran ")[1].split()
    return float(end) - float(start)


@pytest.mark.parametrize("step", ["+3h", "-2h"])
def test_a_time_limit_fires_after_its_elapsed_time_whichever_way_the_wall_clock_steps(
        start_compute: Callable[..., Client], wall_clock: Path, step: str) -> None:
    client = start_compute()
    job = client.submit(JobSpec(argv=["sh", "-c", TIMED], time_limit_s=4, grace_s=30, max_retries=0))
    wait_until(lambda: "started" in log_so_far(client, job.id), what="the job to start")
    wall_clock.write_text(f"{step}\n")
    done = client.wait(job.id, timeout=60)[0]  # -2h: before the fix, the limit never fired
    assert (done.state, done.attempts[0].outcome) == (JobState.failed, AttemptOutcome.timed_out)
    # It starts its watch a moment after the daemon started the attempt: a second of slack for that.
    assert _ran_s(client, job.id) >= 3, f"stopped before its 4 s limit had elapsed (clock stepped {step})"
