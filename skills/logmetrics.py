"""Metrics from the log of a script that does not use MLflow.

Scripts may print `key: value` (or `key=value`) pairs, several per line, or JSON lines
(`{"step": 3, "loss": 0.5}`). A `step` (or, failing that, an integer `epoch` or `iter`) sets the
step of the metrics on its line and of those after it; metrics seen before any step get
their own running count as step. ANSI colours and `\\r` progress-bar rewrites are handled.

`parse_metrics` is pure and incremental: it takes the bytes of a growing log from
`state.offset`, consumes whole lines only, and returns the points and the state to pass
next time. `log_points` writes points with `log_batch` (never one call per metric).
`sync_log_metrics` ties the two to a log file and remembers its state in a run tag.
"""

from __future__ import annotations

import json
import math
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf(?:inity)?)"
DEFAULT_PATTERN = (
    r"(?:^|(?<=[\s,;|(\[]))(?P<key>[A-Za-z_][\w./-]*)(?::\s+|\s*=\s*)(?P<value>" + _NUMBER + r")(?=$|[\s,;|)\]])"
)
"""`key: value` / `key=value` pairs anywhere in a line, separated by spaces, commas,
semicolons or pipes. A colon needs a space after it, so `localhost:8080` is no metric. A custom pattern needs the named groups `key` and `value`."""
STEP_PATTERN = r"(?:^|(?<=[\s,;|(\[]))(?P<key>step|epoch|iter)\s*[:=#]?\s*(?P<value>\d+)(?=$|[\s,;|:/)\]])"
"""Steps written without a colon (`step 100 | loss: 2.3`, `Epoch 3/10`, `iter 50:`)."""
STEP_KEYS = ("step", "epoch", "iter")
"""Keys that set the step, in order of precedence; they are not logged as metrics."""
MAX_LINE_BYTES = 1 << 20
"""A line longer than this (no newline in sight) is skipped rather than waited for."""
STATE_TAG = "autoresearch.log_parser"
"""Run tag prefix holding the parser state of each synced log (`<prefix>.<name>`)."""

_STEP = re.compile(STEP_PATTERN, re.IGNORECASE)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_BAD_KEY_CHARS = re.compile(r"[^\w\-. /:]")
_MLFLOW_BATCH = 1000


class MetricPoint(BaseModel):
    """One parsed metric value."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    key: str
    value: float
    step: int


class ParserState(BaseModel):
    """Where parsing of one log stands; pass it back with the bytes that follow."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    offset: int = 0
    """Bytes of the log consumed so far."""
    step: int | None = None
    """The current step, from the last `step`/`epoch` seen; None before any."""
    counts: dict[str, int] = Field(default_factory=dict)
    """How many values of each key were seen (the step of keys logged before any step)."""


class ParseResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    points: list[MetricPoint]
    state: ParserState


def parse_metrics(
    data: bytes,
    state: ParserState | None = None,
    *,
    pattern: str | re.Pattern[str] | None = None,
    final: bool = False,
) -> ParseResult:
    """Parse `data`, the log bytes from `state.offset` on.

    Only whole lines are consumed (a trailing partial line waits for the next call)
    unless `final` is set, when the log is complete.
    """
    state = state or ParserState()
    regex = re.compile(pattern or DEFAULT_PATTERN, re.IGNORECASE) if not isinstance(pattern, re.Pattern) else pattern
    end = len(data) if final else data.rfind(b"\n") + 1
    if end == 0 and len(data) > MAX_LINE_BYTES:
        end = len(data)  # a runaway line: skip it rather than wait forever
    step, counts, points = state.step, dict(state.counts), []
    for raw in data[:end].split(b"\n"):
        if len(raw) > MAX_LINE_BYTES:
            continue
        text = _ANSI.sub("", raw.decode("utf-8", errors="replace"))
        for line in text.split("\r"):
            pairs = _json_pairs(line) if line.lstrip().startswith("{") else None
            if pairs is None:
                pairs = [(m["key"], float(m["value"])) for m in regex.finditer(line)]
                if _step_key(pairs) is None and (found := _STEP.search(line)):
                    pairs.insert(0, (found["key"], float(found["value"])))
            if not pairs:
                continue
            step_key = _step_key(pairs)
            if step_key is not None:
                step = int(next(value for key, value in pairs if key.lower() == step_key and _is_step(value)))
            for key, value in pairs:
                if key.lower() == step_key and _is_step(value):
                    continue
                key = _BAD_KEY_CHARS.sub("_", key)[:250]
                points.append(MetricPoint(key=key, value=value, step=step if step is not None else counts.get(key, 0)))
                counts[key] = counts.get(key, 0) + 1
    new_state = ParserState(offset=state.offset + end, step=step, counts=counts)
    return ParseResult(points=points, state=new_state)


def _json_pairs(line: str) -> list[tuple[str, float]] | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    return list(_flatten(obj, ""))


def _flatten(obj: dict[str, Any], prefix: str) -> Any:
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten(value, f"{name}/")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield name, float(value)


def _is_step(value: float) -> bool:
    return math.isfinite(value) and value >= 0 and value == int(value)


def _step_key(pairs: list[tuple[str, float]]) -> str | None:
    """The key that sets the step on this line: `step` if present, else `epoch`, else `iter`."""
    present = {key.lower() for key, value in pairs if _is_step(value)}
    return next((key for key in STEP_KEYS if key in present), None)


def log_points(client: MlflowClient, run_id: str, points: list[MetricPoint]) -> int:
    """Log `points` to run `run_id` with `log_batch`, 1000 per call. Returns how many."""
    from mlflow.entities import Metric

    now = int(time.time() * 1000)
    metrics = [Metric(p.key, p.value, now, p.step) for p in points]
    for start in range(0, len(metrics), _MLFLOW_BATCH):
        client.log_batch(run_id, metrics=metrics[start : start + _MLFLOW_BATCH])
    return len(metrics)


def sync_log_metrics(
    client: MlflowClient,
    run_id: str,
    log: Path,
    name: str,
    *,
    previous: ParserState | None = None,
    pattern: str | None = None,
    final: bool = False,
    skip_logged: bool = True,
    max_bytes: int = 64 << 20,
) -> tuple[ParserState, int]:
    """Log the metrics in the new bytes of `log` to `run_id`; returns (state, points logged).

    The state is kept in the run tag `autoresearch.log_parser.<name>`, so repeated calls
    (from any process) log each line once. `previous` seeds a log seen for the first time
    (e.g. the state of the attempt before, so steps carry over); its offset is ignored.
    With `skip_logged`, points whose (step, value) the run already has for that key are
    skipped: a script that logs to MLflow itself and prints the same values is not doubled.
    """
    tag = f"{STATE_TAG}.{name}"
    stored = client.get_run(run_id).data.tags.get(tag)
    if stored:
        state = ParserState.model_validate_json(stored)
    else:
        state = (previous or ParserState()).model_copy(update={"offset": 0})
    if not log.exists():
        return state, 0
    with log.open("rb") as f:
        f.seek(state.offset)
        data = f.read(max_bytes)
    result = parse_metrics(data, state, pattern=pattern, final=final and len(data) < max_bytes)
    points = result.points
    if skip_logged and points:
        logged_before = {
            key: {(m.step, m.value) for m in client.get_metric_history(run_id, key)} for key in {p.key for p in points}
        }
        points = [p for p in points if (p.step, p.value) not in logged_before[p.key]]
    logged = log_points(client, run_id, points)
    if result.state != state:
        client.set_tag(run_id, tag, result.state.model_dump_json())
    return result.state, logged
