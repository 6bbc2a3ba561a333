"""An edited config for a campaign that ran before: what changed, and whether its trials allow it.

`autoresearch run campaign.yaml` on a campaign that failed, paused or was interrupted continues
it with the file as it is now (a fixed command, a new metric pattern, a raised budget). The
runner says what changed (`config_changes`), and refuses a change that would make the trials
already run mean something else (`refused_change`): another objective mode, another objective
metric or `objective.aggregate` once a trial has a value, another type for a parameter trials
were sampled with. A completed or stopped campaign given another config (budget aside) is
refused, naming each key that differs (the runner's `_ended_elsewise`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from autoresearch.campaign.config import Campaign
from autoresearch.campaign.records import TrialRecord

_NEW_NAME = "restore it in the config, or give the campaign a new name to start over"


def config_changes(before: Campaign, after: Campaign, *, ignore: Iterable[str] = (),
                   limit: int | None = None) -> list[str]:
    """One `path: old -> new` line per changed setting (dotted paths, `[i]` for list items), in the
    config's order; top-level sections in `ignore` left out; at most `limit` lines, then `... and N more`."""
    old, new = before.model_dump(mode="json"), after.model_dump(mode="json")
    skipped = set(ignore)
    found = [line for key in [*old, *(k for k in new if k not in old)] if key not in skipped
             for line in _diff(old.get(key), new.get(key), key)]  # fmt: skip
    if limit is None or len(found) <= limit:
        return found
    return [*found[:limit], f"... and {len(found) - limit} more"]


def refused_change(before: Campaign, after: Campaign, trials: Sequence[TrialRecord]) -> str | None:
    """Why campaign `before` cannot continue its `trials` as `after`, or None."""
    name = before.name
    if before.objective.mode != after.objective.mode:
        return (f"campaign {name!r} ran with objective.mode {before.objective.mode.value}; the config now says "
                f"{after.objective.mode.value}, which would rank its trials backwards: {_NEW_NAME}")  # fmt: skip
    valued = [t.number for t in trials if t.value is not None or t.intermediate_values]
    if before.objective.metric != after.objective.metric and valued:
        return (f"campaign {name!r} ran with objective.metric {before.objective.metric!r} and trials "
                f"{_numbers(valued)} have values of it; the config now says {after.objective.metric!r}: {_NEW_NAME}")
    if before.objective.aggregate != after.objective.aggregate and valued:
        return (f"campaign {name!r} read its trials' values with objective.aggregate {before.objective.aggregate} "
                f"and trials {_numbers(valued)} have values so; the config now says {after.objective.aggregate}, "
                f"which would rank values read two ways: {_NEW_NAME}")  # fmt: skip
    for param, spec in after.search_space.items():
        old = before.search_space.get(param)
        sampled = [t.number for t in trials if param in t.params]
        if old is not None and old.type != spec.type and sampled:
            return (f"campaign {name!r}: search_space.{param} was {old.type} and trials {_numbers(sampled)} were "
                    f"sampled so; the config now says {spec.type}: {_NEW_NAME}")  # fmt: skip
    return None


def _numbers(numbers: list[int]) -> str:
    return ", ".join(map(str, numbers[:5])) + (" ..." if len(numbers) > 5 else "")


def _diff(old: Any, new: Any, where: str) -> Iterable[str]:
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(k for k in new if k not in old)]:
            yield from _diff(old.get(key), new.get(key), f"{where}.{key}")
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            yield from _diff(a, b, f"{where}[{i}]")
    else:
        yield f"{where}: {_show(old)} -> {_show(new)}"


def _show(value: Any) -> str:
    if value is None:
        return "(unset)"
    if isinstance(value, list):
        text = "[" + ", ".join(map(str, value)) + "]"
    else:
        text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."
