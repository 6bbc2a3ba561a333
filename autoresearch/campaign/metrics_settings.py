"""The `metrics:` section of the campaign config: how trials' logs are read, and what is recorded.

The rules themselves live in the tracking layer (`tracking.MetricRules`); this section declares
them, checks them where the config is read (patterns compile and name their values; the objective
and every `record` name can be read from some line), and hands them down with `Metrics.rules`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from tracking import MetricRules, MetricSource, builtin_key, captured_names, pattern_problem

from autoresearch.campaign._base import Section
from autoresearch.campaign.params import located


class Metrics(Section):
    """How a trial's log is read into metrics, and which of them its MLflow run records."""

    patterns: list[str] = Field(default_factory=list)
    """Regexes (Python `re` syntax, matched with a time bound): each named group is a metric,
    a group named `step`, `iter` or `epoch` is the step. Lines no pattern matches go to the
    built-in readers (`key: value` lines, JSON lines, Python-dict lines)."""
    record: list[str] | Literal["all"] | None = None
    """Metrics recorded besides the objective; default: every metric read from the log (what the
    patterns capture, the built-in readers' `key: value`, JSON and dict lines; config lines such as
    `batch_size = 64` and prose never); a list: only these (read from config lines too);
    `all`: every number parsed from the log, config lines included."""

    @field_validator("patterns")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        for i, pattern in enumerate(patterns):
            problem = pattern_problem(pattern)
            if problem:
                raise located((i,), problem)
        return patterns

    def rules(self, objective: str) -> MetricRules:
        """The tracking layer's rules for these settings: the objective is always recorded, and read
        from config lines too."""
        patterns = tuple(self.patterns)
        if self.record == "all":
            return MetricRules(patterns=patterns, config_names=None)
        if self.record is None:
            return MetricRules(patterns=patterns, config_names=frozenset({objective}))
        names = frozenset({objective, *self.record})
        return MetricRules(patterns=patterns, record=names, config_names=names)


def uncapturable(objective: str, source: MetricSource, metrics: Metrics) -> tuple[tuple[Any, ...], str] | None:
    """(field path, problem) when a metric to record can be read from no log line, else None."""
    if not metrics.patterns or source is MetricSource.mlflow:
        return None
    captured = captured_names(metrics.patterns)
    if objective not in captured and not builtin_key(objective):
        return ("metrics", "patterns"), (
            f"no pattern captures the objective {objective!r} and the built-in readers cannot "
            f"(not an identifier); patterns capture: {', '.join(captured) or 'nothing'}. Name a group "
            f"after it, e.g. (?P<{_identifier(objective)}>[-+.\\deE]+), and use that name as objective.metric"
        )
    names = metrics.record if isinstance(metrics.record, list) else []
    for i, name in enumerate(names):
        if name not in captured and not builtin_key(name):
            return ("metrics", "record", i), (
                f"record[{i}] {name!r}: no pattern captures it and it is no `key: value` name; "
                f"patterns capture: {', '.join(captured) or 'nothing'}"
            )
    return None


def _identifier(name: str) -> str:
    return re.sub(r"\W", "_", name) or "value"
