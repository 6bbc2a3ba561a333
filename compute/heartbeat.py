"""The daemon's heartbeat: the time of its last tick, for clients to tell a stopped or stuck daemon
(it still holds its lock) from a running one (compute/control.py `daemon_info`)."""

from __future__ import annotations

from compute.clock import Now
from compute.paths import ComputePaths


def record_tick(paths: ComputePaths) -> None:
    """Written by the daemon every pass of its loop (at least every `tick_s`): `BOOT WALL`."""
    now = Now.read()
    try:
        paths.daemon_tick.write_text(f"{now.boot:.3f} {now.wall:.3f}\n")
    except OSError:
        pass  # a full disk: clients see the daemon stale rather than the daemon failing


def last_tick(paths: ComputePaths) -> tuple[float, float] | None:
    """(boot clock, wall clock) of the daemon's last tick; None if unknown."""
    try:
        boot, wall = (float(v) for v in paths.daemon_tick.read_text().split())
    except (OSError, ValueError):
        return None
    return boot, wall
