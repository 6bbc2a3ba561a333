"""Fair share's usage: each project's borrowed GPU-seconds, decayed with a half-life
(`ProjectView.usage`, read by compute/quota.py)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from compute.quota_view import ProjectView, _Attempt, borrowed_attempts


def decayed(usage: float, since: float, now: float, half_life_s: float) -> float:
    """`usage` as of `since`, decayed to `now`."""
    return usage * math.pow(0.5, max(0.0, now - since) / half_life_s)


class UsageMeter:
    """Each project's borrowed GPU-seconds, decayed with a half-life, accumulated tick by tick: the
    `ProjectView.usage` fair share weighs. The daemon (compute/usage.py) and compute/testing/fleet.py
    call `account` once per pass."""

    def __init__(self, half_life_s: float, usage: dict[str, float] | None = None) -> None:
        self.half_life_s = half_life_s
        self.usage: dict[str, float] = dict(usage or {})
        self._borrowing: Counter[str] = Counter()
        self._at: float | None = None

    def account(self, running: Sequence[_Attempt], projects: Sequence[ProjectView], now: float) -> None:
        """Add the borrowed GPUs held since the last call (decaying what was before), then note what is borrowed now."""
        if self._at is not None:
            dt = max(0.0, now - self._at)
            for name in set(self.usage) | set(self._borrowing):
                self.usage[name] = (
                    decayed(self.usage.get(name, 0.0), self._at, now, self.half_life_s) + self._borrowing[name] * dt
                )
        self._at = now
        borrowed = borrowed_attempts(running, {p.name: p for p in projects})
        self._borrowing = Counter()
        for a in running:
            if (a.job_id, a.attempt) in borrowed:
                self._borrowing[a.project] += len(a.gpus)

    def views(self, projects: Sequence[ProjectView]) -> list[ProjectView]:
        """The projects with their usage now."""
        return [replace(p, usage=self.usage.get(p.name, 0.0)) for p in projects]
