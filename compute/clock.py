"""The daemon's clocks: the wall clock for what it stores and shows, the boot clock for durations.

Stored instants stay wall-clock (`started_at`, `kill_at`, `not_before`: what people read). Those a
duration runs from or to (a time limit, a grace period, a backoff) also get their reading of
CLOCK_BOOTTIME (the `*_boot` columns): it never steps with the wall clock (NTP, an operator's
`date -s`), and every process of this host shares it since boot, so a restarted daemon measures
from the same origin. `Now.rebase` moves such an instant onto the wall clock as it reads now (the
wall time now, less the boot-clock time elapsed since), and the daemon hands rebased instants to
its pure logic (scheduler, endings, wait board, hang detection), which compares them with
`Now.wall`. Readings from an earlier boot mean nothing in this one: a daemon that starts on
another boot than the last one forgets them (`boot_id`), and the wall values count.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

_SAME_S = 0.001
"""Below this, a rebased instant is the stored one: both clocks are read a few microseconds apart,
and a stored instant must not wobble from tick to tick when the wall clock did not step."""


def boot_id() -> str:
    """This boot of the host ('' where the kernel does not say)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


@dataclass(frozen=True)
class Now:
    """One reading of both clocks."""

    wall: float
    """time.time(): what is stored and shown."""
    boot: float
    """CLOCK_BOOTTIME: what durations are measured on."""

    @classmethod
    def read(cls) -> Now:
        return cls(time.time(), time.clock_gettime(time.CLOCK_BOOTTIME))

    def rebase(self, wall_at: float, boot_at: float | None) -> float:
        """An instant recorded as (`wall_at`, `boot_at`), on the wall clock as it reads now; the
        stored wall value where there is no boot reading (an older store, another boot)."""
        if boot_at is None:
            return wall_at
        rebased = self.wall - (self.boot - boot_at)
        return wall_at if abs(rebased - wall_at) < _SAME_S else rebased

    def boot_at(self, wall_at: float) -> float:
        """The boot-clock reading of `wall_at`, an instant given on the wall clock as it reads now."""
        return self.boot + (wall_at - self.wall)
