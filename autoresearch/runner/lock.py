"""One runner per campaign: an exclusive fcntl lock on `<campaign dir>/runner.lock`.

The lock file holds the pid of the runner that holds it. The kernel drops the lock when the
process dies (even by SIGKILL), so a killed runner never blocks the next one.
"""

from __future__ import annotations

from pathlib import Path

from compute.pidlock import holder_pid, release, try_lock


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


class CampaignLock:
    """Hold the runner lock of one campaign directory (a context manager)."""

    def __init__(self, name: str, folder: Path) -> None:
        self.name = name
        self.path = folder / "runner.lock"
        self._fd: int | None = None

    def acquire(self) -> CampaignLock:
        """Take the lock or raise `RunnerBusy` naming the holder's pid."""
        fd = try_lock(self.path)
        if fd is None:
            raise RunnerBusy(self.name, holder_pid(self.path), self.path)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            release(self._fd)
            self._fd = None

    def __enter__(self) -> CampaignLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
