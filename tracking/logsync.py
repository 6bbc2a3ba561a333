"""The one log -> tracker sync: the metrics a job printed, logged into its run once each.

A job's attempts each write a log. `LogSync` parses each log from where it stopped and logs
the new points, together with the new parser states (run tags `autoresearch.log_parser.attempt-N`,
see `tracking.tags.log_state_tag`), in one `Tracker.log` batch; points and states land
together, so each metric step is logged once however often it runs, and a process started
later (`LogSync.resume`) goes on where the last one stopped. An attempt seen for the first
time starts from the state of the attempt before (offset 0), so steps carry over.
With `skip_logged`, points whose (step, value) the run already has for their key are
dropped first: after a restart (a process killed inside its last batch), or when a script
that logs to MLflow itself also prints the same values.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from tracking.base import RunView, Tracker
from tracking.logparse import MetricPoint, ParseResult, ParserState, parse_metrics
from tracking.logrules import MetricRules
from tracking.tags import attempt_of_state_tag, log_state_tag

MAX_READ_BYTES = 64 << 20
"""At most this much of a log is read per call; the rest waits for the next."""


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
) -> ParseResult | None:
    """Parse the bytes of `path` from `state.offset` up to `size` (default: its current size) with
    `rules`; None when there is nothing new. `final`: the log is complete (a last partial line counts)."""
    state = state or ParserState()
    size = log_size(path) if size is None else size
    if size < 0 or (size <= state.offset and not final):
        return None
    length = min(max(0, size - state.offset), MAX_READ_BYTES)
    with path.open("rb") as f:
        f.seek(state.offset)
        data = f.read(length)
    return parse_metrics(data, state, rules=rules, final=final and state.offset + len(data) >= size)


class Parsed(NamedTuple):
    """One parse of a log, kept so that another reader of the same bytes need not parse them again."""

    start: ParserState | None
    """The state it started from."""
    result: ParseResult | None
    """What `parse_log` returned from there (every metric, whatever the rules record)."""


def stored_states(run: RunView) -> dict[int, ParserState]:
    """The parser state of each attempt's log, as the run's tags keep it."""
    states = {}
    for tag, value in run.tags.items():
        attempt = attempt_of_state_tag(tag)
        if attempt is not None:
            states[attempt] = ParserState.model_validate_json(value)
    return states


class LogSync:
    """Logs the new metric lines of one run's attempt logs into that run."""

    def __init__(
        self,
        tracker: Tracker,
        run_id: str,
        states: Mapping[int, ParserState] | None = None,
        rules: MetricRules | None = None,
    ) -> None:
        self.tracker = tracker
        self.run_id = run_id
        self.rules = rules
        """How lines become metrics and which are logged (None: built-ins, every metric)."""
        self.states: dict[int, ParserState] = dict(states or {})
        """Per attempt: how far its log is logged into the run."""

    @classmethod
    def resume(cls, tracker: Tracker, run: RunView, rules: MetricRules | None = None) -> LogSync:
        """Go on from the parser states stored on `run`."""
        return cls(tracker, run.run_id, stored_states(run), rules)

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
        """Log the lines of `logs` (attempt -> path) not logged yet, read up to `sizes` (default: now),
        with `tags` in the same batch (written even when there are no new points). Returns the
        number of points logged. `parsed`: a parse of the same logs up to the same `sizes` with the
        same patterns (`LogScan`'s); an attempt's is used when it starts where this sync stands."""
        points: list[MetricPoint] = []
        batch_tags = dict(tags or {})
        previous: ParserState | None = None
        rules = self.rules or MetricRules()
        for attempt in sorted(logs):
            known = self.states.get(attempt)
            start = known or (previous.model_copy(update={"offset": 0}) if previous else None)
            shared = parsed.get(attempt) if parsed is not None else None
            if shared is not None and shared.start == start:
                result = shared.result
            else:
                size = sizes.get(attempt) if sizes is not None else None
                result = parse_log(logs[attempt], start, size=size, final=final, rules=self.rules)
            if result is not None and result.state != known:
                points += [p for p in result.points if rules.records(p.key)] if rules.record is not None else result.points
                self.states[attempt] = result.state
                batch_tags[log_state_tag(attempt)] = result.state.model_dump_json()
            previous = self.states.get(attempt, previous)
        if skip_logged and points:
            history = self.tracker.metric_history
            logged = {k: {(m.step, m.value) for m in history(self.run_id, k)} for k in {p.key for p in points}}
            points = [p for p in points if (p.step, p.value) not in logged[p.key]]
        if points or batch_tags:
            self.tracker.log(self.run_id, metrics=points, tags=batch_tags)
        return len(points)


def read_log_points(
    logs: Mapping[int, Path], *, final: bool = False, rules: MetricRules | None = None
) -> list[MetricPoint]:
    """The metric points of a job's attempt logs (the first `MAX_READ_BYTES` of each), parsed in
    memory: nothing is written. What the read tools show for a job that does not log to MLflow."""
    points: list[MetricPoint] = []
    previous: ParserState | None = None
    for attempt in sorted(logs):
        start = previous.model_copy(update={"offset": 0}) if previous else None
        result = parse_log(logs[attempt], start, final=final, rules=rules)
        if result is not None:
            points += result.points
            previous = result.state
    return points
