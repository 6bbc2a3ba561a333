"""One runner per campaign: an exclusive fcntl lock on the campaign's `runner.lock`
(`CampaignPaths.lock`).

The lock file holds the pid of the runner that holds it. The kernel drops the lock when the
process dies (even by SIGKILL), so a killed runner never blocks the next one.
"""

from __future__ import annotations

from autoresearch.campaign import CampaignPaths
from autoresearch.runner.errors import RunnerBusy
from compute.pidlock import holder_pid, release, try_lock

__all__ = ["CampaignLock", "holder_pid"]


class CampaignLock:
    """Hold the runner lock of one campaign folder (a context manager)."""

    def __init__(self, paths: CampaignPaths) -> None:
        self.name = paths.name
        self.path = paths.lock
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
