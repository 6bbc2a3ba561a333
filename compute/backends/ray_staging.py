"""The Ray backend's side of a remote store (compute/storage.py): what moves for an attempt when
its node shares no filesystem with the daemon.

- `Staging.stage` uploads the job's working directory once per job (`work/<job id>/`) and names
  where its checkpoint directory is kept (`checkpoints/<job id>/`); the node's agent restores both
  before the attempt and keeps the checkpoint directory there while it runs (`_ray_agent.Stage`,
  ray_checkpoints.py).
- `LogPump` brings the attempt's output back while it runs: the agent writes it to its node's
  spool, and the backend's watcher thread asks the agent for what is new (`read_log`, an actor
  call) every `PUMP_S` and appends it to the attempt's log on the daemon's host, where `jobs logs`,
  `read_logs`, tracking and the dashboard read it. The rest is drained before an exit is reported.
"""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import RayError

from compute.backends._ray_agent import Stage
from compute.backends.base import LaunchError
from compute.storage import Storage

PUMP_S = 0.5
"""How often the output of running attempts is brought back."""
_CHUNK = 1 << 20
_CALL_TIMEOUT_S = 30.0


class Staging:
    """Builds each attempt's `Stage` for one daemon's remote store."""

    def __init__(self, storage: Storage, home: Path) -> None:
        self.storage = storage
        self._home = str(home)
        self._uploaded: set[str] = set()

    def stage(self, job_id: str, cwd: str, checkpoint_dir: str | None) -> Stage:
        """Upload the job's working directory (once; not the daemon's home, which holds its store and
        logs: a job run there gets an empty folder on other hosts) and name its checkpoint's place."""
        work = None
        here, home = os.path.realpath(cwd), os.path.realpath(self._home)
        if home.startswith(here.rstrip(os.sep) + os.sep):  # its store, logs and checkpoints, while written
            raise LaunchError(f"its working directory {cwd} holds the daemon's home {self._home}, which would be "
                              "uploaded with it: run the job from a folder outside the home (code and configs; "
                              "data goes in datasets)")
        if here != home:
            work = f"work/{job_id}"
            if job_id not in self._uploaded:
                self.storage.put_dir(cwd, work)
                self._uploaded.add(job_id)
        return Stage(storage=self.storage, work=work, checkpoint_dir=checkpoint_dir, checkpoint=f"checkpoints/{job_id}")


@dataclass
class _Spooled:
    agent: Any
    path: str
    offset: int


class LogPump:
    """Copies staged attempts' output from their agents' spools to their logs here."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._logs: dict[str, _Spooled] = {}

    def add(self, key: str, agent: Any, path: str) -> None:
        """Follow `key`'s output from the end of what `path` holds already (an adopted attempt)."""
        offset = os.path.getsize(path) if os.path.exists(path) else 0
        with self._lock:
            self._logs[key] = _Spooled(agent, path, offset)

    def drop(self, key: str) -> None:
        with self._lock:
            self._logs.pop(key, None)

    def pump(self) -> None:
        """One round: the next chunk of every followed attempt (the watcher thread calls it)."""
        with self._lock:
            self._copy(list(self._logs))

    def drain(self, key: str) -> None:
        """Everything the attempt's agent still holds (before its exit is reported)."""
        with self._lock:
            while key in self._logs and self._copy([key]):
                pass

    def _copy(self, keys: list[str]) -> bool:
        """Append one chunk per key; True if some chunk was full (more may follow)."""
        calls = [(self._logs[k], self._logs[k].agent.read_log.remote(k, self._logs[k].offset, _CHUNK)) for k in keys]
        more = False
        for entry, ref in calls:
            try:
                chunk = ray.get(ref, timeout=_CALL_TIMEOUT_S)
            except RayError:  # the agent is gone or slow: the attempt's poll says what happened
                continue
            if chunk:
                os.makedirs(os.path.dirname(entry.path) or ".", exist_ok=True)
                with open(entry.path, "ab") as out:
                    out.write(chunk)
                entry.offset += len(chunk)
                more = more or len(chunk) == _CHUNK
        return more


def resolves_here(program: str, cwd: str, env: dict[str, str]) -> bool:
    """Whether `program` (argv[0]) is found on the daemon's host, as the attempt would look for it."""
    if "/" in program:
        return os.access(os.path.join(cwd, program), os.X_OK)
    return shutil.which(program, path=env.get("PATH", os.environ.get("PATH"))) is not None
