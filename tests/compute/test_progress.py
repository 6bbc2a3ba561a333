"""ProgressWatch on real files: how long a log has not grown, with the clock passed in."""

from __future__ import annotations

import os
from pathlib import Path

from compute.clock import Now
from compute.progress import ProgressWatch


def _at(boot: float, wall_step: float = 0.0) -> Now:
    """A reading of both clocks: the wall clock equal to the boot clock, unless stepped by `wall_step`."""
    return Now(boot + wall_step, boot)


def test_silence_counts_from_the_start_until_the_log_grows_then_from_the_growth(tmp_path: Path) -> None:
    log = tmp_path / "job.1.log"
    watch = ProgressWatch()
    assert watch.silent_for(str(log), started_at=100.0, now=_at(103.0)) == 3.0  # no log file yet
    log.write_text("")
    assert watch.silent_for(str(log), started_at=100.0, now=_at(104.0)) == 4.0  # created empty: nothing written
    log.write_text("step 1\n")
    assert watch.silent_for(str(log), started_at=100.0, now=_at(105.0)) == 0.0  # grew: seen at 105
    assert watch.silent_for(str(log), started_at=100.0, now=_at(108.5)) == 3.5
    with log.open("a") as fh:
        fh.write("step 2\n")
    assert watch.silent_for(str(log), started_at=100.0, now=_at(109.0)) == 0.0


def test_a_log_first_seen_by_a_restarted_daemon_is_silent_since_its_mtime(tmp_path: Path) -> None:
    log = tmp_path / "job.1.log"
    log.write_text("step 1\n")
    os.utime(log, (150.0, 150.0))
    assert ProgressWatch().silent_for(str(log), started_at=100.0, now=_at(160.0)) == 10.0
    os.utime(log, (500.0, 500.0))  # an mtime ahead of the daemon's clock (a shared filesystem's server)
    assert ProgressWatch().silent_for(str(log), started_at=100.0, now=_at(160.0)) == 0.0


def test_a_stepped_wall_clock_changes_no_silence(tmp_path: Path) -> None:
    log = tmp_path / "job.1.log"
    log.write_text("step 1\n")
    watch = ProgressWatch()
    assert watch.silent_for(str(log), started_at=100.0, now=_at(105.0)) == 0.0
    assert watch.silent_for(str(log), started_at=100.0, now=_at(106.0, wall_step=3 * 3600)) == 1.0
    assert watch.silent_for(str(log), started_at=100.0, now=_at(108.0, wall_step=-2 * 3600)) == 3.0


def test_forget_starts_a_log_over(tmp_path: Path) -> None:
    log = tmp_path / "job.1.log"
    watch = ProgressWatch()
    assert watch.silent_for(str(log), started_at=0.0, now=_at(50.0)) == 50.0
    watch.forget(str(log))
    assert watch.silent_for(str(log), started_at=40.0, now=_at(50.0)) == 10.0


def test_the_hang_marker_reaches_a_log_whose_attempt_has_not_made_it_yet(tmp_path: Path) -> None:
    """A Ray attempt can be stopped as hung before its node agent spawned it (and made its log's
    folder): the marker must still be written, or the classifier has no evidence of the hang."""
    from compute.attempt_logs import append_log
    from compute.health import HANG_MARKER

    log = tmp_path / "logs" / "job-x" / "attempt-1.log"
    append_log(str(log), [f"{HANG_MARKER}: no log output for 4.0 s (progress_timeout_s=4)"])
    assert log.read_text().startswith(HANG_MARKER)
