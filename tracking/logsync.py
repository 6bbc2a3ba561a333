"""The one log -> tracker sync: the metrics a job printed, logged into its run once each.

A job's attempts each write a log. `parse_attempts` is the one loop over them, used by every
reader (`LogSync`, `LogScan`, `read_log_points`): each log is parsed from where it stopped, and an
attempt seen for the first time starts from the state of the attempt before (offset 0), so steps
carry over. `LogSync` logs the new points in one `Tracker.log` batch.

The parser states live in memory only: a run's tags, params and metrics are what users browse,
and internal state stays out of them. A sync that starts on a run an earlier one logged into (a
resumed runner, a second `sync_metrics`) parses the logs from their start and, with
`skip_logged`, drops the points whose (step, value) the run already has for their key: the parse
is deterministic, so the steps are the ones logged before and nothing is logged twice. The same
drop keeps out values that a script logging to MLflow itself also prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from compute.attempt_logs import data_offset
from tracking.base import Tracker
from tracking.logparse import MetricPoint, ParseResult, ParserState, parse_metrics
from tracking.logrules import MetricRules

MAX_READ_BYTES = 64 << 20
"""At most this much of a log is read per call (unless final); the rest waits for the next."""
PARSE_CHUNK_BYTES = 4 << 20
"""A log is parsed this much at a time (more than `MAX_LINE_BYTES`: each chunk consumes something)."""


def log_size(path: Path) -> int:
    """The size of a log file in bytes; -1 when it does not exist (yet)."""
    try:
        return path.stat().st_size
    except OSError:
        return -1


def parse_log(
    path: Path,
    state: ParserState | None,
    *,
    size: int | None = None,
    final: bool = False,
    rules: MetricRules | None = None,
    max_bytes: int | None = MAX_READ_BYTES,
) -> ParseResult | None:
    """Parse the bytes of `path` from `state.offset` up to `size` (default: its current size) with
    `rules`, at most `max_bytes` of them (None: all), in chunks of `PARSE_CHUNK_BYTES`: memory stays
    bounded whatever the log's size or line lengths, and a cut's hole is passed over unread.
    None when there is nothing new. `final`: the log is complete (a last partial line counts)."""
    state = state or ParserState()
    size = log_size(path) if size is None else size
    if size < 0 or (size <= state.offset and not final):
        return None
    stop = size if max_bytes is None else min(size, state.offset + max_bytes)
    points: list[MetricPoint] = []
    with path.open("rb") as f:
        while True:
            at = data_offset(f.fileno(), state.offset, stop)  # at a line's start: a hole holds only NULs
            if at > state.offset:
                state = state.model_copy(update={"offset": at})
            f.seek(at)
            data = f.read(min(PARSE_CHUNK_BYTES, stop - at))
            result = parse_metrics(data, state, rules=rules, final=final and at + len(data) >= size)
            points += result.points
            moved = result.state.offset > state.offset
            state = result.state
            if not moved or state.offset >= stop:
                break
    return ParseResult(points=points, state=state)


class Parsed(NamedTuple):
    """One parse of a log, kept so that another reader of the same bytes need not parse them again."""

    start: ParserState | None
    """The state it started from."""
    result: ParseResult | None
    """What `parse_log` returned from there (every metric, whatever the rules record)."""


def parse_attempts(
    logs: Mapping[int, Path],
    states: Mapping[int, ParserState],
    *,
    sizes: Mapping[int, int] | None = None,
    final: bool = False,
    rules: MetricRules | None = None,
    max_bytes: int | None = MAX_READ_BYTES,
    parsed: Mapping[int, Parsed] | None = None,
) -> dict[int, Parsed]:
    """The one loop over a job's attempt logs (attempt -> path), in attempt order: each log is parsed
    from where `states` says it was read up to; an attempt with no state starts from the state of
    the attempt before (offset 0), so steps carry over. `sizes`: read up to these (default: now);
    `parsed`: an earlier parse of the same bytes with the same rules, used for an attempt whose
    start is the same. Returns attempt -> `Parsed` (its result None when there was nothing new);
    the caller keeps the states it wants from the results."""
    found: dict[int, Parsed] = {}
    previous: ParserState | None = None
    for attempt in sorted(logs):
        known = states.get(attempt)
        start = known or (previous.next_log() if previous else None)
        shared = parsed.get(attempt) if parsed is not None else None
        if shared is not None and shared.start == start:
            result = shared.result
        else:
            size = sizes.get(attempt) if sizes is not None else None
            result = parse_log(logs[attempt], start, size=size, final=final, rules=rules, max_bytes=max_bytes)
        found[attempt] = Parsed(start, result)
        previous = result.state if result is not None else (known or previous)
    return found


class LogSync:
    """Logs the new metric lines of one run's attempt logs into that run."""

    def __init__(self, tracker: Tracker, run_id: str, rules: MetricRules | None = None) -> None:
        self.tracker = tracker
        self.run_id = run_id
        self.rules = rules
        """How lines become metrics and which are logged (None: built-ins, every metric)."""
        self.states: dict[int, ParserState] = {}
        """Per attempt: how far its log is logged into the run (in memory only)."""

    def sync(
        self,
        logs: Mapping[int, Path],
        *,
        final: bool = False,
        sizes: Mapping[int, int] | None = None,
        skip_logged: bool = False,
        tags: Mapping[str, str] | None = None,
        parsed: Mapping[int, Parsed] | None = None,
    ) -> int:
        """Log the lines of `logs` (attempt -> path) not logged yet, read up to `sizes` (default: now,
        at most `MAX_READ_BYTES` further per attempt), with `tags` in the same batch (written even
        when there are no new points). `skip_logged`: drop the points the run has (a sync that
        starts on a run logged into before must set it). Returns the number of points logged.
        `parsed`: a parse of the same logs up to the same `sizes` with the same patterns (`LogScan`'s);
        an attempt's is used when it starts where this sync stands."""
        points: list[MetricPoint] = []
        rules = self.rules or MetricRules()
        results = parse_attempts(logs, self.states, sizes=sizes, final=final, rules=self.rules,
                                 max_bytes=None if final else MAX_READ_BYTES, parsed=parsed)  # fmt: skip
        for attempt, (_, result) in results.items():
            if result is not None and result.state != self.states.get(attempt):
                points += [p for p in result.points if rules.records(p.key)] if rules.record is not None else result.points
                self.states[attempt] = result.state
        if skip_logged and points:
            history = self.tracker.metric_history
            logged = {k: {(m.step, m.value) for m in history(self.run_id, k)} for k in {p.key for p in points}}
            points = [p for p in points if (p.step, p.value) not in logged[p.key]]
        if points or tags:
            self.tracker.log(self.run_id, metrics=points, tags=tags)
        return len(points)


def read_log_points(
    logs: Mapping[int, Path], *, final: bool = False, rules: MetricRules | None = None
) -> list[MetricPoint]:
    """The metric points of a job's attempt logs (the first `MAX_READ_BYTES` of each), parsed in
    memory: nothing is written. What the read tools show for a job that does not log to MLflow."""
    results = parse_attempts(logs, {}, final=final, rules=rules).values()
    return [p for _, result in results if result is not None for p in result.points]
