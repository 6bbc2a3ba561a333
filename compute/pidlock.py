"""A pid lock file: an fcntl lock held for a process's lifetime, holding its pid as text.

The kernel drops the lock when the process dies (even by SIGKILL), so a dead holder never
blocks the next one. Used for the one daemon per home, and by upper layers (one runner
per campaign).
"""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path


def holder_pid(path: Path) -> int | None:
    """The pid of the live process holding the lock at `path` (-1 if unreadable), or None."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as err:
        if err.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        return _read_pid(fd)
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def try_lock(path: Path) -> int | None:
    """Take the lock and write our pid into it; return its fd (keep it open), or None if held."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        os.close(fd)
        if err.errno not in (errno.EAGAIN, errno.EACCES):
            raise
        return None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def release(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)


def _read_pid(fd: int) -> int:
    text = os.pread(fd, 32, 0).decode().strip()
    return int(text) if text.isdigit() else -1
