"""Where the compute layer keeps its state under $AUTORESEARCH_HOME/compute/.

The one place that resolves the home directory and names every file in it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

_MAX_SOCKET_PATH = 100  # sun_path holds 108 bytes; keep a margin


def resolve_home(home: str | os.PathLike[str] | None = None) -> Path:
    """`home`, else $AUTORESEARCH_HOME, else ~/.autoresearch; absolute, not created."""
    if home is None:
        home = os.environ.get("AUTORESEARCH_HOME") or Path.home() / ".autoresearch"
    return Path(home).expanduser().resolve()


def socket_address(path: Path, home: Path, name: str) -> str:
    """A datagram socket's address: `path`, or when that is too long for a Unix socket (deep temp
    dirs), an abstract socket named after `name` and a hash of the home."""
    if len(str(path).encode()) <= _MAX_SOCKET_PATH:
        return str(path)
    import hashlib  # only for a deep home

    digest = hashlib.sha256(str(home).encode()).hexdigest()[:24]
    return f"\0autoresearch-{name}-{digest}"


class ComputePaths(NamedTuple):  # not a dataclass: the CLI's fast path must not pay for importing inspect
    """The files of one compute home."""

    home: Path

    @classmethod
    def of(cls, home: str | os.PathLike[str] | None = None) -> ComputePaths:
        return cls(resolve_home(home))

    @property
    def root(self) -> Path:
        return self.home / "compute"

    @property
    def db(self) -> Path:
        return self.root / "store.db"

    @property
    def db_marker(self) -> Path:
        """Written once the store's schema exists: a later store.db without it lost its state."""
        return self.root / "store.created"

    @property
    def lock(self) -> Path:
        """Held (fcntl.flock) by the running daemon; holds its pid as text."""
        return self.root / "daemon.lock"

    @property
    def daemon_info(self) -> Path:
        """JSON written by the daemon once ready: pid, config, nodes, socket."""
        return self.root / "daemon.json"

    @property
    def daemon_env(self) -> Path:
        """JSON, owner-only, written with daemon.json: the variables the daemon needs to reach its cluster
        (`compute.control.CLUSTER_ENV`), so that a daemon a client restarts gets them, not the client's."""
        return self.root / "daemon.env"

    @property
    def daemon_tick(self) -> Path:
        """The daemon's last tick: `BOOT WALL` (compute/control.py `record_tick`)."""
        return self.root / "daemon.tick"

    @property
    def daemon_log(self) -> Path:
        return self.root / "daemon.log"

    @property
    def run_dir(self) -> Path:
        """Pid and exit-code files of attempts (survive a daemon crash)."""
        return self.root / "run"

    @property
    def socket_address(self) -> str:
        """The daemon's wake-up datagram socket: `daemon.sock` in the compute dir (see `socket_address`)."""
        return socket_address(self.root / "daemon.sock", self.home, "compute")

    @property
    def watchers(self) -> Path:
        """The wake-up sockets of clients waiting on jobs (compute/watchers.py)."""
        return self.root / "watchers"

    @property
    def faults(self) -> Path:
        """Fault drills armed on virtual nodes, one `<node>.json` each (`compute inject-fault`)."""
        return self.root / "faults"

    def log_path(self, job_id: str, attempt: int, rank: int = 0) -> Path:
        """An attempt's log; a gang member of rank > 0 has its own beside rank 0's."""
        name = f"attempt-{attempt}.log" if rank == 0 else f"attempt-{attempt}.rank{rank}.log"
        return self.root / "logs" / job_id / name

    def checkpoint_dir(self, job_id: str) -> Path:
        return self.root / "checkpoints" / job_id

    def ensure(self) -> None:
        for directory in (self.root, self.run_dir, self.root / "logs", self.root / "checkpoints"):
            directory.mkdir(parents=True, exist_ok=True)
