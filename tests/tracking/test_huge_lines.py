"""Logs with huge lines and cut logs: the metric reader reads past them, in bounded memory."""

from __future__ import annotations

import os
import time
import tracemalloc
from pathlib import Path

from compute import Attempt, Job, JobSpec, JobState
from compute.attempt_logs import CUT_MARKER, cap_log, read_chunks, text_of
from tracking import PARSE_CHUNK_BYTES, InMemoryTracker, MetricReader, MetricSource, ParserState, parse_log, parse_metrics
from tracking.logparse import MAX_LINE_BYTES



def _ended_job(log: Path) -> Job:
    now = time.time()
    attempt = Attempt(job_id="job-0000000001", number=1, node="local", gpus=[], started_at=now, log_path=str(log))
    return Job(id="job-0000000001", spec=JobSpec(argv=["true"]), state=JobState.succeeded, priority=50,
               created_at=now, updated_at=now, checkpoint_dir="/tmp", attempts=[attempt])


def _write_huge_line(log: Path, megabytes: int, after: bytes) -> None:
    block = b"x" * (1 << 20)
    with log.open("wb") as f:
        f.write(b"step: 1\n")
        for _ in range(megabytes):
            f.write(block)
        f.write(b"\n" + after)


def test_an_objective_printed_after_a_200_mb_line_is_read_in_bounded_memory(tmp_path: Path) -> None:
    log = tmp_path / "attempt-1.log"
    _write_huge_line(log, 200, b"objective: 0.31\n")
    tracker = InMemoryTracker()
    run_id = tracker.create_run(tracker.experiment("e"))
    reader = MetricReader(tracker, "objective", MetricSource.log)
    tracemalloc.start()
    try:
        values = reader.read(0, run_id, _ended_job(log), final=True)  # the job ended before any poll saw it
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert values == [(1, 0.31)]
    assert [m.value for m in tracker.metric_history(run_id, "objective")] == [0.31]
    assert peak < 4 * PARSE_CHUNK_BYTES  # the 200 MB line was never held


def test_a_runaway_line_read_across_calls_gives_no_metric_from_its_pieces(tmp_path: Path) -> None:
    # The pieces of a line over MAX_LINE_BYTES that arrive in later calls are skipped too, even
    # when a piece looks like a metric line.
    piece = b"loss: 9.0 " * (MAX_LINE_BYTES // 10 + 1)
    first = parse_metrics(b"step: 1\n" + piece)
    assert first.state.skipping and first.points == []
    second = parse_metrics(b"loss: 9.0\nloss: 0.5\n", first.state)
    assert [(p.key, p.value) for p in second.points] == [("loss", 0.5)]
    assert not second.state.skipping
    assert ParserState.model_validate_json(second.state.model_dump_json()) == second.state


def test_a_cut_log_is_read_past_its_hole_without_a_lost_line(tmp_path: Path) -> None:
    log = tmp_path / "attempt-1.log"
    with log.open("w") as f:
        for step in range(1, 200_001):
            f.write(f"step: {step} loss: {step / 10:.1f}\n")
    assert cap_log(str(log), 1 << 20)
    assert os.stat(log).st_blocks * 512 < 1 << 20
    text = text_of(b"".join(chunk for _, chunk in read_chunks(log)))
    after_cut = text[text.index(CUT_MARKER):].splitlines()[1]  # the first line the cut kept
    result = parse_log(log, None, final=True, max_bytes=None)
    assert result is not None
    steps = [p.step for p in result.points]
    first_kept = int(after_cut.split()[1])
    assert steps[0] == 1 and steps[-1] == 200_000 and first_kept > 100_000
    assert steps[steps.index(first_kept):] == list(range(first_kept, 200_001))
