"""Hang detection: how long an attempt's log has not grown, from one `stat` per check.

The daemon asks once per tick for each running attempt whose job sets `progress_timeout_s`;
past that many silent seconds it stops the attempt as hung. Growth is measured on the daemon's
own clock (the file's size changed since the last look), so a log on a shared filesystem whose
server clock is off still times right, and on its boot clock, so a stepped wall clock changes
no silence (compute/clock.py); the file's mtime is read only the first time a log is
seen (a daemon restart adopting a running attempt keeps the silence it had). Logs are never
read. Keyed by log path, so each log of an attempt (one per gang member) is watched alike.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from compute.clock import Now


@dataclass
class _Seen:
    size: int
    """The log's size at the last look (0 while there is no log file yet)."""
    since: float
    """When it last grew (the boot clock)."""


class ProgressWatch:
    """When each watched log last grew."""

    def __init__(self) -> None:
        self._seen: dict[str, _Seen] = {}

    def silent_for(self, log_path: str, started_at: float, now: Now) -> float:
        """Seconds since `log_path` last grew; an attempt that wrote nothing yet counts from `started_at`
        (on the wall clock as it reads `now`)."""
        try:
            stat = os.stat(log_path)
            size, written = stat.st_size, stat.st_mtime
        except OSError:
            size, written = 0, started_at
        seen = self._seen.get(log_path)
        if seen is None:
            since = max(started_at, min(written, now.wall)) if size > 0 else started_at
            seen = self._seen[log_path] = _Seen(size, now.boot_at(since))
        elif size != seen.size:
            seen.size, seen.since = size, now.boot
        return max(0.0, now.boot - seen.since)

    def forget(self, log_path: str) -> None:
        """The attempt ended: stop watching its log."""
        self._seen.pop(log_path, None)
