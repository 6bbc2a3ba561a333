"""One runner per campaign: an exclusive fcntl lock on `<campaign dir>/runner.lock`.

The lock file holds the pid of the runner that holds it. The kernel drops the lock when the
process dies (even by SIGKILL), so a killed runner never blocks the next one.
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path


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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            os.close(fd)
            if err.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            raise RunnerBusy(self.name, holder_pid(self.path), self.path) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> CampaignLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder_pid(path: Path) -> int | None:
    """The pid of the live runner holding the lock at `path`, or None when nobody holds it."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as err:
        if err.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        text = os.pread(fd, 32, 0).decode().strip()
        return int(text) if text.isdigit() else -1
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)
