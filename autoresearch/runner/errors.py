"""The runner's exceptions, in one module every runner module may import (no cycles)."""

from __future__ import annotations

from pathlib import Path


class RunnerError(Exception):
    """The campaign cannot run; the message says why and what to do next."""


class RunnerBusy(Exception):
    """Another live process runs this campaign; the message names its pid."""

    def __init__(self, name: str, pid: int | None, path: Path) -> None:
        who = f"pid {pid}" if pid else "another process"
        super().__init__(
            f"campaign {name!r} is already being run by {who} (lock {path}). Watch it with "
            f"`autoresearch status {name}`, steer it with `autoresearch resume {name}` (which posts to "
            f"its inbox), or stop that process before starting another runner."
        )
        self.pid = pid
