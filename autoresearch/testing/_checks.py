"""What the conformance suites share: a small campaign to run them on, and `raises`, so the suites
need no test framework (each check is a plain function that raises AssertionError)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from autoresearch.campaign import Campaign

SPACE: dict[str, Any] = {
    "x": {"type": "float", "low": -5.0, "high": 5.0},
    "y": {"type": "int", "low": 0, "high": 10},
    "kind": {"type": "categorical", "choices": ["a", "b", "c"]},
}
"""The suites' search space: one float, one int, one categorical parameter."""


def suite_campaign(base_dir: Path, name: str = "suite", **overrides: Any) -> Campaign:
    """A campaign on `SPACE` (maximize `score`, 30 trials, 4 in parallel), `overrides` on top."""
    data: dict[str, Any] = {
        "name": name,
        "command": ["python", "job.py", "--x", "{x}", "--y", "{y}", "--kind", "{kind}"],
        "objective": {"metric": "score", "mode": "max"},
        "search_space": SPACE,
        "budget": {"max_trials": 30, "max_parallel": 4},
        "policy": {"kind": "optuna", "seed": 7},
    }
    data.update(overrides)
    return Campaign.model_validate(data, context={"base_dir": base_dir})


def score(params: dict[str, Any]) -> float:
    """A deterministic objective on `SPACE` (maximum 10 at x=1, y=3, kind=b)."""
    bonus = {"a": 0.0, "b": 1.0, "c": 0.5}[params["kind"]]
    return 9.0 - (params["x"] - 1.0) ** 2 - 0.1 * (params["y"] - 3) ** 2 + bonus


@contextmanager
def raises(kind: type[BaseException], match: str = "", what: str = "the block") -> Iterator[None]:
    """Assert that the block (`what`, for the failure message) raises `kind` with a message
    matching the regex `match`."""
    try:
        yield
    except kind as exc:
        if not re.search(match, str(exc)):
            raise AssertionError(f"{what} raised {kind.__name__}, but {str(exc)!r} does not match {match!r}") from exc
    else:
        raise AssertionError(f"{what} did not raise {kind.__name__}")
