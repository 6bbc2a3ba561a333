"""Classify a failed attempt as infra, user or resource from its exit status and log tail.

Rules are data (`compute/health/rules.py`, extendable from a YAML/JSON file or a list of
dicts) tried in order; the first that matches wins. A rule matches when every condition
it has holds: its exit codes, its signals, its regex on some line of the tail (the last
matching line is reported). Config rules go before the built-in ones, so they can
override them. Nothing matched: `user` (rule `unrecognized`), so an unknown failure
spends the job's own retries instead of looping on the infra budget.
"""

from __future__ import annotations

import json
import re
import signal as signal_module
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from compute.health.rules import DEFAULT_RULES
from compute.records import FailureClass

TAIL_LINES = 200
"""How many last lines of a log the classifier reads."""


class Rule(BaseModel):
    """One named failure pattern."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    name: str = Field(min_length=1)
    """Short unique name, reported with the classification (`nccl_timeout`)."""
    failure_class: FailureClass = Field(alias="class")
    """infra, user or resource (`class:` in a config file)."""
    pattern: str | None = None
    """Python regex searched in each line of the log tail (`(?i)` for case-insensitive)."""
    exit_codes: frozenset[int] | None = None
    """The rule applies only to these exit codes (e.g. [2] for argparse errors)."""
    signals: frozenset[int] | None = None
    """The rule applies only to deaths by these signals (9 = SIGKILL), whether reported as -9 or 137."""
    explanation: str = Field(min_length=1)
    """One sentence for whoever reads the attempt next: what it means, what to do."""

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value, re.MULTILINE)
            except re.error as exc:
                raise ValueError(f"invalid regex {value!r}: {exc}") from None
        return value

    @model_validator(mode="after")
    def _has_condition(self) -> Rule:
        if self.pattern is None and self.exit_codes is None and self.signals is None:
            raise ValueError(f"rule {self.name!r} has no condition: give a pattern, exit_codes or signals")
        return self


class Classification(BaseModel):
    """Why an attempt failed, and the evidence."""

    model_config = ConfigDict(frozen=True)

    failure_class: FailureClass
    """infra (retry elsewhere, infra budget), user (spends max_retries) or resource."""
    rule: str
    """The rule that matched (`unrecognized` when none did)."""
    line: str = ""
    """The log line that matched ('' for rules on exit status alone)."""
    explanation: str
    """What it means and what to do."""
    exit_code: int | None = None
    """The exit code classified (negative: killed by a signal)."""
    signal: int | None = None
    """The signal that ended it, if one did."""


def signal_of(exit_code: int | None) -> int | None:
    """The signal behind an exit code: -9 (Popen) or 137 (a shell's 128+9) are both SIGKILL."""
    if exit_code is None:
        return None
    if exit_code < 0:
        return -exit_code
    if 128 < exit_code <= 128 + signal_module.NSIG:
        return exit_code - 128
    return None


def load_rules(source: str | Path | Sequence[Mapping[str, Any]]) -> list[Rule]:
    """Rules from a YAML/JSON file (a list, or a mapping with a `rules:` list) or from dicts."""
    where = "rules"
    if isinstance(source, (str, Path)):
        import yaml  # here, not at import: the dashboard's Fleet page imports this module and reads no YAML

        path = Path(source)
        where = str(path)
        try:
            text = path.read_text()
        except OSError as exc:
            raise ValueError(f"{path}: cannot read failure rules ({exc.strerror})") from None
        try:
            data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        except (ValueError, yaml.YAMLError) as exc:
            raise ValueError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: {exc}") from None
        if isinstance(data, Mapping):
            data = data.get("rules")
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a list of rules (or `rules:` with a list), got {type(data).__name__}")
        source = data
    rules = []
    for i, item in enumerate(source):
        label = f"{where}: rule {i + 1}" + (f" ({item.get('name')!r})" if isinstance(item, Mapping) else "")
        if not isinstance(item, Mapping):
            raise ValueError(f"{label}: expected a mapping with name, class, pattern, explanation")
        try:
            rules.append(Rule.model_validate(dict(item)))
        except ValidationError as exc:
            errors = "; ".join(
                f"field {'.'.join(map(str, e['loc'])) or '(rule)'}: {e['msg']}" for e in exc.errors()
            )
            raise ValueError(f"{label}: {errors}. Expected keys: name, class (infra|user|resource), "
                             "explanation, and pattern and/or exit_codes and/or signals") from None
    return rules


class Classifier:
    """Tries rules in order on an attempt's exit status and log tail.

    `extra_rules` go first; one named like a built-in rule replaces it.
    """

    def __init__(self, extra_rules: Iterable[Rule] = (), builtin: bool = True):
        extra = list(extra_rules)
        names = [r.name for r in extra]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"failure rules: duplicate rule names {dupes}: give each rule its own name")
        base = [r for r in load_rules(DEFAULT_RULES) if r.name not in names] if builtin else []
        self.rules: list[Rule] = extra + base
        """Rules in the order they are tried; a config rule replaces the built-in one of its name."""
        self._regexes = [re.compile(r.pattern) if r.pattern else None for r in self.rules]

    @classmethod
    def from_config(cls, source: str | Path | Sequence[Mapping[str, Any]] | None) -> Classifier:
        """The built-in rules, after those of `source` (a file or dicts) when given."""
        return cls(load_rules(source) if source is not None else ())

    def classify(self, exit_code: int | None, log_tail: str, signal: int | None = None) -> Classification:
        """Classify one failed attempt. `signal` defaults to the one implied by `exit_code`."""
        signal = signal if signal is not None else signal_of(exit_code)
        lines = log_tail.splitlines()[-TAIL_LINES:]
        for rule, regex in zip(self.rules, self._regexes):
            if rule.exit_codes is not None and exit_code not in rule.exit_codes:
                continue
            if rule.signals is not None and signal not in rule.signals:
                continue
            line = ""
            if regex is not None:
                found = next((ln for ln in reversed(lines) if regex.search(ln)), None)
                if found is None:
                    continue
                line = found
            return Classification(failure_class=rule.failure_class, rule=rule.name, line=line.strip()[:500],
                                  explanation=rule.explanation, exit_code=exit_code, signal=signal)
        return Classification(
            failure_class=FailureClass.user, rule="unrecognized", exit_code=exit_code, signal=signal,
            explanation="no rule matched: treated as a failure of the job itself (it spends max_retries)",
        )
