"""Which log lines become metrics, and which metrics are recorded: `MetricRules`.

- Patterns (`MetricRules.patterns`): regexes in the syntax of the `regex` package (a superset
  of `re`), case-sensitive, matched with a time bound (`MATCH_TIMEOUT_S`: a pattern that
  backtracks without end on a hostile line gives nothing for that line). Every named group is a
  metric named after the group, except `step`, `epoch` and `iter`, which set the step (when
  integral). A line that some pattern matches is read by the patterns only (each pattern once).
- Other lines go to the built-in readers (`tracking.logparse`): `key: value` / `key=value`
  lines, JSON lines and Python-dict lines.
- Config lines (`name = value` alone on a line, spaces around `=`: a config file echoed, as
  nanoGPT echoes its own) are no metrics: only names in `config_names` are read from them.
- `record`: the metric names logged into a run (None: every metric parsed). Nothing else of a
  log reaches the tracker.

`pattern_problem` is the one check of a pattern (`autoresearch config check` uses it).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

import regex
from pydantic import BaseModel, ConfigDict

STEP_KEYS = ("step", "epoch", "iter")
"""Keys that set the step, in order of precedence; they are not metrics when they do."""
MATCH_TIMEOUT_S = 0.05
"""How long one pattern may work on one line; past it the line is skipped for that pattern."""
_KEY = re.compile(r"[A-Za-z_]\w*(?:[./][A-Za-z_]\w*)*")


class MetricRules(BaseModel):
    """How a log is read into metrics, and which of them a run records."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    patterns: tuple[str, ...] = ()
    """Regexes with named groups (`(?P<val_loss>[-+.\\deE]+)`); `step`/`epoch`/`iter` groups set the step."""
    record: frozenset[str] | None = None
    """The metric names recorded; None: every metric parsed."""
    config_names: frozenset[str] | None = frozenset()
    """The names read from config lines too (the objective, names the campaign's `record` lists);
    None: every config line's number is a metric."""

    def records(self, key: str) -> bool:
        """Whether metric `key` is recorded."""
        return self.record is None or key in self.record

    def reads_config(self, key: str) -> bool:
        """Whether `key` is read from a config line."""
        return self.config_names is None or key in self.config_names

    def captured(self) -> list[str]:
        """The metric names the patterns capture (step groups excepted), in pattern order."""
        return captured_names(self.patterns)


def builtin_key(name: str) -> bool:
    """Whether the built-in `key: value` reader can produce metric `name`: an identifier, or
    identifiers joined by `.` or `/` (`val_loss`, `train/loss`, `eval.acc`)."""
    return _KEY.fullmatch(name) is not None


def pattern_problem(pattern: str) -> str | None:
    """What is wrong with a metrics pattern (it does not compile, or has no named group), or None."""
    try:
        compiled = regex.compile(pattern)
    except regex.error as exc:
        return f"pattern {pattern!r} does not compile: {exc}"
    if not compiled.groupindex:
        return (
            f"pattern {pattern!r} has no named group: name each value, e.g. "
            "'val loss (?P<val_loss>[-+.\\deE]+)' (a group named step, iter or epoch is the step)"
        )
    return None


def captured_names(patterns: Iterable[str]) -> list[str]:
    """The metric names some pattern captures (step groups excepted), each once."""
    names: list[str] = []
    for compiled in compile_patterns(tuple(patterns)):
        names += [n for n in compiled.groupindex if n not in STEP_KEYS and n not in names]
    return names


@functools.cache
def compile_patterns(patterns: tuple[str, ...]) -> tuple[regex.Pattern[str], ...]:
    """The compiled patterns (kept: the same rules are read on every poll)."""
    return tuple(regex.compile(p) for p in patterns)


def match_patterns(patterns: tuple[str, ...], line: str) -> list[tuple[str, str]] | None:
    """(group, text) of every pattern that matches `line`, each within `MATCH_TIMEOUT_S`;
    None when no pattern matches (the built-ins read the line)."""
    found: list[tuple[str, str]] | None = None
    for compiled in compile_patterns(patterns):
        try:
            match = compiled.search(line, timeout=MATCH_TIMEOUT_S)
        except TimeoutError:
            continue
        if match is None:
            continue
        found = found or []
        found += [(name, text) for name, text in match.groupdict().items() if text is not None]
    return found
