"""Metrics from the log of a script that does not use MLflow.

Built-in readers, for the lines no pattern of the `MetricRules` matches (`tracking.logrules`):

- `key: value` / `key=value` pairs, several per line, separated by spaces, commas, semicolons
  or pipes. A key is an identifier (or identifiers joined by `.` or `/`); a colon needs a
  space after it (`localhost:8080` is no metric). A line is read only when it holds nothing
  but such pairs, step markers (`step 100`, `Epoch 3/10`, `iter 50:`), numbers and punctuation
  (progress bars): a line with any other word is prose and gives nothing, so
  `Overriding: learning_rate = 0.001` or `tokens per iteration will be: 768` never become metrics.
- A config line, `name = value` alone on a line with a space before the `=` (a config file
  echoed, as nanoGPT echoes its own: `batch_size = 64`), gives only the names the rules'
  `config_names` allow (by default none).
- JSON object lines (`{"step": 3, "loss": 0.5}`) and Python-dict lines (HF Trainer's: 4.x
  `{'loss': 2.31, 'learning_rate': 5e-05, 'epoch': 0.5}`, 5.x the same numbers as quoted strings,
  `{'loss': '2.31', 'learning_rate': '5e-05', 'epoch': '0.5'}`, at most `MAX_DICT_CHARS`), also
  right after a tqdm progress bar on the same line (a bar on stderr leaves no newline before the
  dict the script prints to stdout): their numbers, nested dicts flattened with `/`. A quoted
  number never sets the step.

A `step` (or, failing that, `epoch`, then `iter`) written as an integer sets the step of the
metrics on its line and of those after it; metrics seen before any step get their own running
count as step. ANSI colours and `\\r` progress-bar rewrites are handled.

`parse_metrics` is pure and incremental: it takes the bytes of a growing log from
`state.offset`, consumes whole lines only, and returns the points and the state to pass
next time. `tracking.logsync` ties it to log files and a tracker.
"""

from __future__ import annotations

import ast
import json
import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tracking.logrules import STEP_KEYS, MetricRules, match_patterns

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:nan|inf(?:inity)?)"
DEFAULT_PATTERN = (
    r"(?:^|(?<=[\s,;|(\[{]))(?P<key>[A-Za-z_]\w*(?:[./][A-Za-z_]\w*)*)(?::\s+|\s*=\s*)(?P<value>" + _NUMBER + r")"
    r"(?=$|[\s,;|)\]}])"
)
"""The built-in `key: value` / `key=value` pair."""
STEP_PATTERN = r"(?:^|(?<=[\s,;|(\[]))(?P<key>step|epoch|iter)\s*[:=#]?\s*(?P<value>\d+)(?=$|[\s,;|:/)\]])"
"""Steps written without a colon (`step 100 | loss: 2.3`, `Epoch 3/10`, `iter 50:`)."""
MAX_LINE_BYTES = 1 << 20
"""A line longer than this is skipped (not read, not waited for: its bytes up to its newline are
passed over however many calls they take), and the lines after it are read."""
MAX_DICT_CHARS = 100_000
"""A Python-dict line longer than this is not read (its parse would cost too much)."""

_PAIR = re.compile(DEFAULT_PATTERN, re.IGNORECASE)
_ONE_PAIR = re.compile(
    r"\s*(?P<key>[A-Za-z_]\w*(?:[./][A-Za-z_]\w*)*)(?P<sep>:\s+|\s*=\s*)(?P<value>" + _NUMBER + r")\s*", re.IGNORECASE
)
"""A line that is one `key: value` pair and nothing else (most lines): read without the general search.
A `sep` that starts with a space before `=` makes it a config line."""
_QUOTED_NUMBER = re.compile(_NUMBER, re.IGNORECASE)
_BAR = re.compile(r"\s*(?:[^{|]*:\s*)?\d+%\|[^{]*\]\s*")
"""A tqdm progress bar (`desc:  50%|#####     | 4/8 [00:01<00:01,  3.10it/s]`), left before a dict line."""
_STEP = re.compile(STEP_PATTERN, re.IGNORECASE)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_WORD = re.compile(r"[^\W\d_]")
_INTEGER = re.compile(r"[-+]?\d+")
_BAD_KEY_CHARS = re.compile(r"[^\w\-. /:]")
_NAMES = {"nan": math.nan, "NaN": math.nan, "inf": math.inf, "Infinity": math.inf}

_Pair = tuple[str, float, bool]
"""(key, value, whether it may be a step: written as a non-negative integer)."""


class MetricPoint(BaseModel):
    """One metric value at a step (parsed from a log, or to be logged)."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    key: str
    """The metric name (characters MLflow refuses are replaced by `_`)."""
    value: float
    """The value; NaN and infinities are kept."""
    step: int
    """The step it was logged at."""
    timestamp: int | None = None
    """When it was recorded, in ms since the epoch (None: when it is logged). A queued point keeps
    the time it was queued, so applying it again stores nothing new (`tracking.outbox`)."""


class ParserState(BaseModel):
    """Where parsing of one log stands; pass it back with the bytes that follow."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    offset: int = 0
    """Bytes of the log consumed so far."""
    step: int | None = None
    """The current step, from the last `step`/`epoch` seen; None before any."""
    counts: dict[str, int] = Field(default_factory=dict)
    """How many values of each key were seen (the step of keys logged before any step), recorded
    by the rules or not (states stored before 2026-12-04 count recorded keys only: the same steps)."""
    skipping: bool = False
    """Inside a line longer than `MAX_LINE_BYTES`: the bytes up to its newline are skipped."""

    def next_log(self) -> ParserState:
        """Where the log of the next attempt starts: its first byte, with this log's step and counts."""
        return self.model_copy(update={"offset": 0, "skipping": False})


class ParseResult(BaseModel):
    """What one call of `parse_metrics` found."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    points: list[MetricPoint]
    """The metric values of the lines consumed, in log order (only those `rules` record)."""
    state: ParserState
    """Where the next call goes on."""


def parse_metrics(
    data: bytes,
    state: ParserState | None = None,
    *,
    rules: MetricRules | None = None,
    final: bool = False,
) -> ParseResult:
    """Parse `data`, the log bytes from `state.offset` on, with `rules` (default: the built-in
    readers, every metric recorded).

    Only whole lines are consumed (a trailing partial line waits for the next call)
    unless `final` is set, when the log is complete.
    """
    state = state or ParserState()
    rules = rules or MetricRules()
    begin, skipping = 0, state.skipping
    if skipping:  # the rest of a runaway line
        newline = data.find(b"\n")
        begin, skipping = (len(data), not final) if newline < 0 else (newline + 1, False)
    end = len(data) if final else max(data.rfind(b"\n") + 1, begin)
    rest = data[end:]
    if len(rest) > MAX_LINE_BYTES:
        if rest.strip(b"\0"):
            skipping = True  # a runaway line: skip it rather than wait forever
        end = len(data)  # (NUL bytes only: a cut, nothing to read)
    step, counts, points = state.step, dict(state.counts), []
    for raw in data[begin:end].split(b"\n") if end > begin else []:
        if b"\0" in raw:  # a cut (compute.attempt_logs.cap_log): its NUL bytes are no text
            raw = raw.replace(b"\0", b"")
        if len(raw) > MAX_LINE_BYTES:
            continue
        text = raw.decode("utf-8", errors="replace")
        if "\x1b" in text:
            text = _ANSI.sub("", text)
        for line in text.split("\r"):
            pairs = _read_line(line, rules)
            if not pairs:
                continue
            step_key = _step_key(pairs)
            if step_key is not None:
                step = int(next(value for key, value, stepish in pairs if stepish and key.lower() == step_key))
            for key, value, stepish in pairs:
                if stepish and key.lower() == step_key:
                    continue
                key = _BAD_KEY_CHARS.sub("_", key)[:250]
                count = counts.get(key, 0)
                counts[key] = count + 1  # every key, recorded or not: the state is the same whatever `record` says
                if rules.records(key):
                    points.append(MetricPoint(key=key, value=value, step=step if step is not None else count))
    new_state = ParserState(offset=state.offset + end, step=step, counts=counts, skipping=skipping)
    return ParseResult(points=points, state=new_state)


def _read_line(line: str, rules: MetricRules) -> list[_Pair]:
    """The pairs of one line: the patterns' if one matches, else the built-in readers'."""
    if rules.patterns:
        found = match_patterns(rules.patterns, line)
        if found is not None:
            return _pattern_pairs(found)
    stripped = line.strip()
    if stripped.endswith("}"):
        if stripped.startswith("{"):
            return _dict_pairs(stripped)
        start = stripped.find("{")
        if start > 0 and _BAR.fullmatch(stripped, 0, start):
            return _dict_pairs(stripped[start:])
    return _text_pairs(line, rules)


def _pattern_pairs(found: list[tuple[str, str]]) -> list[_Pair]:
    pairs = []
    for name, text in found:
        try:
            value = float(text)
        except ValueError:
            continue
        pairs.append((name, value, name in STEP_KEYS and _is_step(value)))
    return pairs


def _text_pairs(line: str, rules: MetricRules) -> list[_Pair]:
    """`key: value` pairs and step markers, or nothing when the line holds other words (prose) or
    is a config line of a name `rules` do not read from config lines."""
    one = _ONE_PAIR.fullmatch(line)
    if one is not None:  # what `_searched_pairs` gives such a line, a few times faster
        if one["sep"][0].isspace() and not rules.reads_config(one["key"]):
            return []
        value = float(one["value"])
        return [(one["key"], value, _INTEGER.fullmatch(one["value"]) is not None and _is_step(value))]
    return _searched_pairs(line)


def _searched_pairs(line: str) -> list[_Pair]:
    found_pairs, found_steps = list(_PAIR.finditer(line)), list(_STEP.finditer(line))
    if not found_pairs and not found_steps:
        return []
    rest, last = [], 0
    for m in sorted([*found_pairs, *found_steps], key=lambda m: m.start()) if found_steps else found_pairs:
        rest.append(line[last : m.start()])
        last = max(last, m.end())
    rest.append(line[last:])
    if _WORD.search("".join(rest)):
        return []
    pairs = [(m["key"], float(m["value"]), _INTEGER.fullmatch(m["value"]) is not None) for m in found_pairs]
    if found_steps and _step_key(pairs) is None:
        found = found_steps[0]
        pairs.insert(0, (found["key"], float(found["value"]), True))
    return [(k, v, stepish and _is_step(v)) for k, v, stepish in pairs]


def _dict_pairs(text: str) -> list[_Pair]:
    """The numbers of a JSON object line or a Python-dict line (nested dicts flattened with `/`)."""
    try:
        obj = json.loads(text)
    except ValueError:
        obj = _literal_dict(text)
    if not isinstance(obj, dict):
        return []
    return list(_flatten(obj, ""))


def _literal_dict(text: str) -> dict[str, Any] | None:
    """A Python dict literal of numbers, strings, bools, None, nan and inf; None otherwise."""
    if len(text) > MAX_DICT_CHARS:
        return None
    try:
        tree = ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    try:
        value = _literal(tree)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _literal(node: ast.AST) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in _NAMES:
        return _NAMES[node.id]
    if isinstance(node, ast.Name) and node.id in ("True", "False", "None", "true", "false", "null"):
        return None  # not a number
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = _literal(node.operand)
        if isinstance(inner, (int, float)) and not isinstance(inner, bool):
            return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Dict) and None not in node.keys:
        return {str(_literal(k)): _literal(v) for k, v in zip(node.keys, node.values) if k is not None}
    if isinstance(node, (ast.List, ast.Tuple)):
        return None  # lists carry no metric
    raise ValueError("not a literal")


def _flatten(obj: dict[str, Any], prefix: str) -> Any:
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            yield from _flatten(value, f"{name}/")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield name, float(value), isinstance(value, int) and value >= 0
        elif isinstance(value, str) and _QUOTED_NUMBER.fullmatch(value):
            yield name, float(value), False  # transformers 5 quotes its numbers; a quoted one is no step


def _is_step(value: float) -> bool:
    return math.isfinite(value) and value >= 0 and value == int(value)


def _step_key(pairs: list[_Pair]) -> str | None:
    """The key that sets the step on this line: `step` if present, else `epoch`, else `iter`."""
    present = {key.lower() for key, _, stepish in pairs if stepish}
    if not present:
        return None
    return next((key for key in STEP_KEYS if key in present), None)
