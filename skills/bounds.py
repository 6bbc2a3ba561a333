"""Keep every skill's output under a byte bound, cutting with explicit markers.

Agents read skill output into a context window: a list of 5,000 jobs or a 2 GB log
must arrive as a bounded answer that says what was cut and how to see the rest.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from skills.models import SkillOutput

_Output = TypeVar("_Output", bound=SkillOutput)

_MIN_STRING = 80
"""Strings shorter than this are never cut (ids, states, names)."""


def output_size(output: SkillOutput) -> int:
    """Bytes of the output as compact JSON, the form every consumer receives."""
    return len(_dumps(output.model_dump(mode="json")))


def cut_marker(count: int, unit: str) -> str:
    """The marker left where output was cut, e.g. `[... 1234 lines cut ...]`."""
    return f"[... {count} {unit} cut ...]"


def cut_middle(text: str, max_chars: int) -> str:
    """`text` with its middle replaced by a marker so it fits in about `max_chars`."""
    if len(text) <= max_chars:
        return text
    keep = max(max_chars - 30, 0)
    head, tail = keep // 2, keep - keep // 2
    cut = len(text) - head - tail
    return text[:head] + cut_marker(cut, "chars") + (text[-tail:] if tail else "")


def bound_output(output: _Output, max_bytes: int) -> _Output:
    """`output` unchanged if it fits in `max_bytes` of JSON; otherwise its largest lists
    and strings cut until it fits, with `truncated` set and `truncation` saying what was cut.

    Lists lose items from the end (so paging with offset/limit continues where the cut
    was); strings lose their middle, replaced by a `[... N chars cut ...]` marker.
    """
    data = output.model_dump(mode="json")
    size = len(_dumps(data))
    if size <= max_bytes:
        return output
    cuts: dict[str, list[Any]] = {}  # path -> [unit, original size, current size]
    budget = max_bytes - 300  # room for the truncation note itself
    while size > budget:
        found = _largest(data, ())
        if found is None:
            break
        path, value, value_size = found
        excess = size - budget
        if isinstance(value, list):
            per_item = max(value_size / len(value), 1.0)
            drop = min(len(value), max(1, int(excess / per_item) + 1))
            new: Any = value[: len(value) - drop]
            unit, before, after = "items", len(value), len(new)
        else:
            new = cut_middle(value, max(len(value) - excess - 40, _MIN_STRING // 2))
            unit, before, after = "chars", len(value), len(new)
        _set(data, path, new)
        cuts.setdefault(_path(path), [unit, before, after])[2] = after
        size = len(_dumps(data))
    notes = [data["truncation"]] if data.get("truncation") else []
    notes += [f"{path}: {before - after} of {before} {unit} cut" for path, (unit, before, after) in cuts.items()]
    data["truncated"] = True
    data["truncation"] = "; ".join(notes) + f" (output bound {max_bytes} bytes)"
    return type(output).model_validate(data)


def _dumps(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def _largest(node: Any, path: tuple[Any, ...]) -> tuple[tuple[Any, ...], Any, int] | None:
    """The largest cuttable list or string under `node`, by serialized size."""
    best: tuple[tuple[Any, ...], Any, int] | None = None
    children: list[tuple[Any, Any]] = []
    if isinstance(node, dict):
        children = [(k, v) for k, v in node.items() if k != "truncation"]
    elif isinstance(node, list):
        children = list(enumerate(node))
    for key, child in children:
        inner = _largest(child, (*path, key)) if isinstance(child, (dict, list)) else None
        candidate = inner
        if (isinstance(child, list) and child) or (isinstance(child, str) and len(child) > _MIN_STRING):
            size = len(_dumps(child))
            # Cut the list itself unless one element inside it holds most of its bytes.
            if inner is None or inner[2] * 2 < size:
                candidate = ((*path, key), child, size)
        if candidate is not None and (best is None or candidate[2] > best[2]):
            best = candidate
    return best


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        data = data[key]
    data[path[-1]] = value


def _path(path: tuple[Any, ...]) -> str:
    return ".".join(str(p) for p in path)
