"""What the daemon measures for projects each tick: decayed borrowed usage, and checkpoint times.

`ProjectUsage` keeps each project's borrowed GPU-seconds in a `UsageMeter` (compute/quota_usage.py),
decayed with `DaemonConfig.fair_share_half_life_s`; it starts from the values stored in
`projects` and writes them back every `SAVE_EVERY_S`. `checkpoint_time` is when a job last
touched its checkpoint dir ($AR_CHECKPOINT_DIR), which a reclaim uses to stop the borrowed
attempts that lose the least progress. `project_report` is what `compute projects` shows.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from compute.project_report import project_rows
from compute.projects import ProjectStatus, load_projects, project_views, save_usage
from compute.quota_usage import UsageMeter, decayed
from compute.quota_view import ProjectView
from compute.scheduler import RunningAttempt
from compute.store import Store

SAVE_EVERY_S = 10.0
"""How often the daemon writes the usage into the store (`compute projects` shows it)."""


def checkpoint_time(path: str) -> float | None:
    """The newest mtime of the checkpoint dir and its entries (a job touches the dir or writes into
    it); None when it does not exist."""
    try:
        newest = os.stat(path).st_mtime
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
                except OSError:
                    continue  # removed meanwhile
    except OSError:
        return None
    return newest


class ProjectUsage:
    """The daemon's projects and their usage, read from and saved to the store."""

    def __init__(self, store: Store, half_life_s: float) -> None:
        self.store = store
        self.meter: UsageMeter | None = None
        self.half_life_s = half_life_s
        self._views: list[ProjectView] = []
        self._saved_at = 0.0

    def projects(self, now: float) -> list[ProjectView]:
        """The configured projects with their usage now (empty: no projects, scheduling as without them)."""
        stored = load_projects(self.store)
        if self.meter is None and stored:
            start = {p.name: decayed(p.usage_gpu_s, p.usage_at, now, self.half_life_s) for p in stored}
            self.meter = UsageMeter(self.half_life_s, start)
        self._views = self.meter.views(project_views(stored)) if self.meter is not None else []
        return self._views

    def account(self, running: Sequence[RunningAttempt], now: float) -> None:
        """Count this tick's borrowed GPUs; save the usage every `SAVE_EVERY_S`."""
        if self.meter is None or not self._views:
            return
        self.meter.account(running, self._views, now)
        if now - self._saved_at >= SAVE_EVERY_S:
            self._saved_at = now
            save_usage(self.store, self.meter.usage, now)


def project_report(store: Store, half_life_s: float, now: float) -> list[ProjectStatus]:
    """`compute projects`: each project's quotas, GPUs and CPUs in use, borrowed and lent, pending jobs, usage
    (`compute.project_report.project_rows`, validated)."""
    return [ProjectStatus(**row) for row in project_rows(store.read, half_life_s, now)]
