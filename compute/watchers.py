"""Waking the clients that wait on jobs (`Client.wait`, `Client.wait_for_change`) when the store changes.

A waiting client used to look at the store every few ms: each look is a few SQLite reads, ~100 us
of CPU, so a campaign runner waiting on its trials used 4% of a core at one look per 5 ms, on
machines whose cores run the jobs, and still saw a job's end 2.5 ms late on average. Instead a
waiter registers a `Watcher`, a datagram socket, and whoever commits a change to jobs wakes every
registered watcher with one byte (`wake_watchers`): the daemon after a tick that changed the
store, a client after it cancelled a pending job (the one change a request makes to a job's state
itself; other requests only wake the daemon). The byte carries nothing: the waiter
then reads the store, which stays the truth, and it still looks on its own now and then, so a lost
byte, a daemon of an older version or a platform without these sockets only makes it slower.

Rules:

- A watcher is named by a file `<compute dir>/watchers/<pid>-<token>`, made once its socket is
  bound (a sender that finds the file finds the socket). The socket is `<that file>.sock` when
  the path fits a Unix socket, else an abstract one named after a hash of the home (Linux).
- A send that finds nobody there (the waiter exited or was killed) removes the watcher's files.
- Sends never block: a full buffer means a wake-up is pending already.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
from pathlib import Path

from compute.paths import ComputePaths, socket_address

_SOCKET_SUFFIX = ".sock"


def _address(paths: ComputePaths, name: str) -> str:
    return socket_address(paths.watchers / f"{name}{_SOCKET_SUFFIX}", paths.home, f"watch-{name}")


class Watcher:
    """One waiter's wake-up socket (close it, or its files go when the next send finds it gone)."""

    def __init__(self, paths: ComputePaths) -> None:
        paths.watchers.mkdir(parents=True, exist_ok=True)
        name = f"{os.getpid()}-{os.urandom(4).hex()}"
        self._marker = paths.watchers / name
        self._address = _address(paths, name)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            self._sock.setblocking(False)
            self._sock.bind(self._address)
            self._marker.touch()
        except OSError:
            self.close()
            raise

    def wait(self, timeout: float) -> bool:
        """Sleep until woken or `timeout` seconds passed; True when woken (wake-ups are drained)."""
        readable, _, _ = select.select([self._sock], [], [], max(0.0, timeout))
        if not readable:
            return False
        with contextlib.suppress(BlockingIOError, InterruptedError):
            while self._sock.recv(64):
                pass
        return True

    def close(self) -> None:
        self._sock.close()
        _remove(self._marker, self._address)


def wake_watchers(paths: ComputePaths) -> None:
    """Send every registered watcher a wake-up (best effort); remove the ones nobody holds."""
    try:
        names = [n for n in os.listdir(paths.watchers) if not n.endswith(_SOCKET_SUFFIX)]
    except OSError:  # no watcher ever registered in this home
        return
    if not names:
        return
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.setblocking(False)
        for name in names:
            address = _address(paths, name)
            try:
                sock.sendto(b"c", address)
            except (ConnectionRefusedError, FileNotFoundError):  # its process is gone
                _remove(paths.watchers / name, address)
            except OSError:  # full (a wake-up is pending) or momentarily unavailable
                pass


def _remove(marker: Path, address: str) -> None:
    marker.unlink(missing_ok=True)
    if not address.startswith("\0"):
        Path(address).unlink(missing_ok=True)
