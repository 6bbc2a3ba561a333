"""Metrics from the log of a script that does not use MLflow.

Scripts may print `key: value` (or `key=value`) pairs, several per line, or JSON lines
(`{"step": 3, "loss": 0.5}`). A `step` (or, failing that, an integer `epoch` or `iter`) sets the
step of the metrics on its line and of those after it; metrics seen before any step get
their own running count as step. ANSI colours and `\\r` progress-bar rewrites are handled.

`parse_metrics` is pure and incremental: it takes the bytes of a growing log from
`state.offset`, consumes whole lines only, and returns the points and the state to pass
next time. `tracking.logsync` ties it to log files and a tracker.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

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

_STEP = re.compile(STEP_PATTERN, re.IGNORECASE)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_BAD_KEY_CHARS = re.compile(r"[^\w\-. /:]")


class MetricPoint(BaseModel):
    """One metric value at a step (parsed from a log, or to be logged)."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    key: str
    """The metric name (characters MLflow refuses are replaced by `_`)."""
    value: float
    """The value; NaN and infinities are kept."""
    step: int
    """The step it was logged at."""


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
    """What one call of `parse_metrics` found."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    points: list[MetricPoint]
    """The metric values of the lines consumed, in log order."""
    state: ParserState
    """Where the next call goes on."""


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
