"""Every process of an attempt, wherever it went: found, signalled and waited for together.

A command can leave its process group: `setsid`, a daemonizing double fork. Such a process keeps
its GPUs (CUDA_VISIBLE_DEVICES) after its attempt was cancelled or preempted, so signalling the
group is not enough. An attempt's processes are tracked two ways, and `pids` is their union:

- a cgroup (v2) per attempt, where this host has a cgroup2 hierarchy we may write: the attempt
  moves itself there before its command starts, and every descendant stays in it whatever its
  session, parent or environment (`cgroup_base` finds the place; None: no cgroups here);
- the attempt's marker: its `AR_JOB_ID` and `AR_ATTEMPT` (and `AR_NODE_RANK` for a gang member)
  in /proc/PID/environ, which every descendant inherits unless it clears its environment. The
  scan skips what it cannot read (EACCES: another user's process, a non-dumpable one).

The daemon sets itself as the child subreaper (`become_subreaper`), so daemonized orphans of
its attempts are re-parented to it, not to init; `reap` collects those that have ended.
Zombies count as gone everywhere. This host's /proc only: a backend whose attempts run on
other hosts tracks them there (the Ray node agent does, with its marker).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path

from compute.jobenv import AR_ATTEMPT, AR_JOB_ID, AR_NODE_RANK

MARKER_NAMES = (AR_JOB_ID.name, AR_ATTEMPT.name, AR_NODE_RANK.name)
"""The variables of an attempt's environment that name it (the last only in gang members)."""
_PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Tracking:
    """How one attempt's processes are found."""

    marker: tuple[str, ...]
    """`NAME=value` entries every process of the attempt has in its environment."""
    cgroup: str | None = None
    """The attempt's cgroup directory; None where this host gives us none."""

    @classmethod
    def of(cls, env: dict[str, str], cgroup: Path | None) -> Tracking:
        return cls(tuple(f"{k}={env[k]}" for k in MARKER_NAMES if k in env), None if cgroup is None else str(cgroup))

    def to_json(self) -> str:
        return json.dumps({"marker": list(self.marker), "cgroup": self.cgroup})

    @classmethod
    def from_json(cls, text: str) -> Tracking:
        data = json.loads(text)
        return cls(tuple(data["marker"]), data.get("cgroup"))

    def pids(self, exclude: frozenset[int] = frozenset()) -> set[int]:
        """The live processes of the attempt (never this process, nor `exclude`)."""
        found = set(_cgroup_pids(self.cgroup)) if self.cgroup else set()
        if self.marker:
            wanted = {entry.encode() for entry in self.marker}
            found |= {pid for pid in _all_pids() if wanted <= _environ(pid)}
        return {pid for pid in found - exclude - {os.getpid()} if _alive(pid)}

    def signal(self, signum: int, exclude: frozenset[int] = frozenset()) -> set[int]:
        """Send `signum` to every live process of the attempt; return the pids signalled."""
        pids = self.pids(exclude)
        for pid in pids:
            try:
                os.kill(pid, signum)
            except (ProcessLookupError, PermissionError):
                pass
        if signum == signal.SIGKILL and self.cgroup:
            _write(Path(self.cgroup) / "cgroup.kill", "1")  # also those forked since the scan
        return pids

    def remove(self) -> None:
        """Remove the attempt's cgroup (once empty; no error if it is not)."""
        if self.cgroup:
            try:
                os.rmdir(self.cgroup)
            except OSError:
                pass


def cgroup_base(owner: Path) -> Path | None:
    """A cgroup2 directory for the attempts of `owner` (a run dir) below this process's own
    cgroup, created if need be; None where there is no cgroup2 hierarchy or we may not write it."""
    mount = next((line.split()[1] for line in _lines("/proc/self/mounts") if line.split()[2:3] == ["cgroup2"]), None)
    own = next((line[3:] for line in _lines("/proc/self/cgroup") if line.startswith("0::")), None)
    if mount is None or own is None:
        return None
    base = Path(mount) / own.lstrip("/") / f"autoresearch-{hashlib.sha256(str(owner).encode()).hexdigest()[:12]}"
    try:
        base.mkdir(exist_ok=True)
    except OSError:
        return None
    return base if os.access(base / "cgroup.procs", os.W_OK) else None


def new_cgroup(base: Path | None, key: str) -> Path | None:
    """The cgroup of attempt `key` below `base` (None if there is no base or it cannot be made)."""
    if base is None:
        return None
    try:
        (base / key).mkdir(exist_ok=True)
    except OSError:
        return None
    return base / key


def become_subreaper() -> bool:
    """Make this process the child subreaper (Linux): orphans of its descendants come back to it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def reap(pids: set[int]) -> set[int]:
    """Collect those of `pids` (processes seen in an attempt) that ended as children of this
    process (re-parented orphans); return those still alive, to try again later."""
    for pid in pids:
        try:
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG)
        except (ChildProcessError, OSError):
            pass
    return {pid for pid in pids if _alive(pid)}


def _cgroup_pids(cgroup: str) -> list[int]:
    return [int(line) for line in _lines(f"{cgroup}/cgroup.procs") if line.strip().isdigit()]


def _all_pids() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _environ(pid: int) -> set[bytes]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return set(fh.read().split(b"\0"))
    except OSError:  # gone, or not ours to read (EACCES)
        return set()


def _alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :][:1] not in ("Z", "X", "")


def _lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text)
    except OSError:
        pass
