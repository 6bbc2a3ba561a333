"""What differs between two campaign configs, key by key (`run` of an ended campaign says it)."""

from __future__ import annotations

from typing import Any

from autoresearch.campaign.config import Campaign

_JUDGED = frozenset({"budget"})
"""Sections a later run may change freely: the runner judges the campaign's limits by the new values."""


def config_changes(old: Campaign, new: Campaign, *, limit: int = 5) -> list[str]:
    """`path: old -> new` for each key that differs (at most `limit`, then `... and N more`),
    budget aside."""
    found: list[str] = []
    before, after = old.model_dump(mode="json"), new.model_dump(mode="json")
    for key in sorted((set(before) | set(after)) - _JUDGED):
        _walk(key, before.get(key), after.get(key), found)
    return found[:limit] + ([f"... and {len(found) - limit} more"] if len(found) > limit else [])


def _walk(path: str, a: Any, b: Any, found: list[str]) -> None:
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            _walk(f"{path}.{key}", a.get(key), b.get(key), found)
    elif isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            _walk(f"{path}[{i}]", a[i] if i < len(a) else None, b[i] if i < len(b) else None, found)
    else:
        found.append(f"{path}: {_short(a)} -> {_short(b)}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
