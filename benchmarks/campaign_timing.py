"""What the campaign benchmark computes from one arm's run: per-trial overhead, slot-refill gaps,
and the paired regret test. Pure functions of measured timestamps (no clock, no I/O).

Definitions (docs/benchmarks.md quotes them):

- job span: a job's process lifetime as the arm sees it, from just before it is spawned to the
  moment its end is noticed (the stack: the compute store's attempt `started_at` .. `ended_at`,
  written by the daemon around spawn and reap; the peers: `time.time()` around `subprocess.run`).
- ideal makespan: the same job durations, taken in the order the jobs started, list-scheduled on
  `slots` slots with zero time between a job's end and the next job's start.
- per-trial overhead = (wall clock - ideal makespan) / trials. It charges to the arm everything
  that is not a job running: proposing, bookkeeping, launching, reaping, the campaign's start
  and end, and slots left idle.
- refill gap: with ends and starts each sorted, the i-th job end frees a slot that the
  (i + slots)-th start takes; gap_i = start[i + slots] - end[i]. Its median is the typical
  job-end -> next-job-start latency. For the stack the gap splits into the runner's part (end ->
  the next job's submit, `created_at` in the store) and the daemon's part (submit -> start).
"""

from __future__ import annotations

import heapq
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Span:
    """One job as an arm ran it (Unix seconds)."""

    start: float
    """Just before the job's process was spawned."""
    end: float
    """When the arm noticed the process had ended."""
    submitted: float | None = None
    """When the job was handed to the scheduler (the stack only: the job's `created_at`)."""


@dataclass(frozen=True)
class Gaps:
    """Medians of the refill gaps of one run, in milliseconds."""

    gap_ms: float
    """job end -> the next job's start."""
    runner_ms: float | None
    """job end -> the next job's submit (None when the arm has no separate submit)."""
    daemon_ms: float | None
    """the next job's submit -> its start."""


def ideal_makespan(spans: Sequence[Span], slots: int) -> float:
    """The spans' durations, in start order, list-scheduled on `slots` slots with no gaps."""
    free = [0.0] * slots
    for span in sorted(spans, key=lambda s: s.start):
        heapq.heappush(free, heapq.heappop(free) + (span.end - span.start))
    return max(free)


def overhead_ms(wall_s: float, spans: Sequence[Span], slots: int) -> float:
    """(wall clock - ideal makespan) / trials, in milliseconds."""
    if not spans:
        raise ValueError("overhead_ms: no job spans (did the arm run any trial?)")
    return (wall_s - ideal_makespan(spans, slots)) / len(spans) * 1000.0


def refill_gaps(spans: Sequence[Span], slots: int) -> Gaps:
    """Median job-end -> next-start gap, and for spans with `submitted` its two parts."""
    by_start = sorted(spans, key=lambda s: s.start)
    ends = sorted(s.end for s in spans)
    pairs = [(ends[i], by_start[i + slots]) for i in range(len(spans) - slots)]
    if not pairs:
        raise ValueError(f"refill_gaps: {len(spans)} jobs on {slots} slots never refill a slot; run more trials")
    gap = statistics.median(nxt.start - end for end, nxt in pairs) * 1000.0
    if any(nxt.submitted is None for _, nxt in pairs):
        return Gaps(gap, None, None)
    runner = statistics.median(nxt.submitted - end for end, nxt in pairs) * 1000.0  # type: ignore[operator]
    daemon = statistics.median(nxt.start - nxt.submitted for _, nxt in pairs) * 1000.0  # type: ignore[operator]
    return Gaps(gap, runner, daemon)


def paired_test(ours: Sequence[float], theirs: Sequence[float]) -> dict[str, float | int | None]:
    """Two-sided Wilcoxon signed-rank test of paired regrets (same seeds); differences within
    1e-8 are ties (the job prints 10 significant digits). Lower regret wins."""
    from scipy.stats import wilcoxon

    diffs = [a - b for a, b in zip(ours, theirs, strict=True)]
    wins = sum(d < -1e-8 for d in diffs)
    losses = sum(d > 1e-8 for d in diffs)
    untied = [d for d in diffs if abs(d) > 1e-8]
    p = float(wilcoxon(untied).pvalue) if len(untied) >= 2 else None
    return {"seeds": len(diffs), "wins": wins, "losses": losses, "ties": len(diffs) - wins - losses,
            "median_diff": statistics.median(diffs) if diffs else None, "p_value": p}  # fmt: skip
