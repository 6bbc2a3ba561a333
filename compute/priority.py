"""Job priorities: the named classes and the one place their shorthand is resolved (no pydantic:
the CLI's reading commands name priorities without importing the job model)."""

from __future__ import annotations

import enum


class Priority(enum.IntEnum):
    """Named priority classes. Any integer 0-100 is allowed; these are the names."""

    idle = 0
    low = 25
    normal = 50
    high = 75
    urgent = 90


def parse_priority(value: int | str) -> int:
    """Resolve a priority given as a name (`high`) or an integer (`60`) to 0-100.

    The one place where priority shorthand is resolved.
    """
    if isinstance(value, bool):
        raise ValueError("priority must be a name or an integer 0-100, not a boolean")
    if isinstance(value, int):
        number = value
    else:
        text = str(value).strip().lower()
        if text in Priority.__members__:
            return int(Priority[text])
        try:
            number = int(text)
        except ValueError:
            names = ", ".join(f"{p.name}={p.value}" for p in Priority)
            raise ValueError(f"unknown priority {value!r}: use a name ({names}) or an integer 0-100") from None
    if not 0 <= number <= 100:
        raise ValueError(f"priority {number} is out of range: use 0-100 (idle=0 ... urgent=90)")
    return number


def priority_name(value: int) -> str:
    """The class name of a priority value (`normal` for 50, `50+` style for in-between values)."""
    named = [p for p in Priority if p.value <= value]
    best = max(named, key=lambda p: p.value)
    return best.name if best.value == value else f"{best.name}+{value - best.value}"


__all__ = ["Priority", "parse_priority", "priority_name"]
