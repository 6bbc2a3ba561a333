"""Where attempts' working directories, logs and checkpoints meet when nodes share no filesystem.

`compute up --backend ray --storage URI` chooses it per cluster; `resolve_storage` is the one
function that reads the value:

- a plain absolute path (or none: the daemon's home) is a **shared path**, mounted at the same
  place on every node: nothing is copied (the behaviour before `--storage` existed);
- a URI with a scheme (`file:///nfs/x`, `s3://bucket/prefix`, `gs://bucket/prefix`, anything
  `pyarrow.fs.FileSystem.from_uri` opens, as Ray Train's `storage_path` does) is a **remote
  store**: the daemon uploads a job's working directory (`work/<job id>/`), the node's agent
  restores it and the job's checkpoint directory (`checkpoints/<job id>/`) before the attempt
  and keeps that directory there while the attempt runs (compute/backends/ray_checkpoints.py);
  logs come back over Ray.

Either way the daemon writes a sentinel there (`StorageProbe` checks on each node that it can
read it): a node that cannot reach the storage is quarantined with that reason.
"""

from __future__ import annotations

import functools
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from compute.errors import ComputeError
from compute.health.report import Check, HealthReport, NodeTarget
from compute.records import HealthStatus

SENTINEL = ".autoresearch-sentinel"
_T = TypeVar("_T")


def _storage_errors(method: Callable[..., _T]) -> Callable[..., _T]:
    """Whatever the store raises (OSError, pyarrow's errors) becomes a ComputeError naming the storage."""

    @functools.wraps(method)
    def wrapped(self: Storage, *args: Any) -> _T:
        try:
            return method(self, *args)
        except Exception as err:  # pyarrow raises its own classes beside OSError
            raise ComputeError(f"storage {self.uri}: {err}") from err

    return wrapped


@dataclass(frozen=True)
class Storage:
    """A resolved `--storage` value (travels to the nodes by pickle)."""

    uri: str
    """A path (shared) or a URI with a scheme (remote)."""
    shared: bool
    """True: every node mounts it at the same path, nothing is copied."""

    def _fs(self) -> tuple[Any, str]:
        import pyarrow.fs  # type: ignore[import-untyped]  # only where a remote store is used

        fs, base = pyarrow.fs.FileSystem.from_uri(self.uri)
        return fs, base.rstrip("/")

    @_storage_errors
    def write_text(self, rel: str, text: str) -> None:
        """Write a small file at `rel` under the storage, whole: a reader sees the old text or the new
        one (written beside it, then moved over it)."""
        part = f"{rel}.part-{uuid.uuid4().hex[:8]}"
        if self.shared:
            path = Path(self.uri, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            Path(self.uri, part).write_text(text)
            os.replace(Path(self.uri, part), path)
            return
        fs, base = self._fs()
        fs.create_dir(os.path.dirname(f"{base}/{rel}"), recursive=True)
        with fs.open_output_stream(f"{base}/{part}") as out:
            out.write(text.encode())
        fs.move(f"{base}/{part}", f"{base}/{rel}")

    @_storage_errors
    def read_text(self, rel: str) -> str | None:
        """The small file at `rel`, None if it is not there."""
        if self.shared:
            path = Path(self.uri, rel)
            return path.read_text() if path.is_file() else None
        import pyarrow.fs

        fs, base = self._fs()
        if fs.get_file_info(f"{base}/{rel}").type != pyarrow.fs.FileType.File:
            return None
        with fs.open_input_stream(f"{base}/{rel}") as src:
            return bytes(src.read()).decode()

    @_storage_errors
    def put_dir(self, local: str, rel: str) -> None:
        """Copy the folder `local` (recursively) to `rel` (files there are overwritten, others kept)."""
        import pyarrow.fs

        fs, base = self._fs()
        fs.create_dir(f"{base}/{rel}", recursive=True)
        pyarrow.fs.copy_files(local, f"{base}/{rel}", source_filesystem=pyarrow.fs.LocalFileSystem(),
                              destination_filesystem=fs)

    @_storage_errors
    def get_dir(self, rel: str, local: str) -> bool:
        """Copy `rel` (recursively) into the folder `local`; False when the storage has no `rel`."""
        import pyarrow.fs

        fs, base = self._fs()
        if fs.get_file_info(f"{base}/{rel}").type != pyarrow.fs.FileType.Directory:
            return False
        Path(local).mkdir(parents=True, exist_ok=True)
        pyarrow.fs.copy_files(f"{base}/{rel}", local, source_filesystem=fs,
                              destination_filesystem=pyarrow.fs.LocalFileSystem())
        return True


    @_storage_errors
    def folders(self, rel: str) -> list[str]:
        """The names of the folders in `rel` (none when it is missing)."""
        import pyarrow.fs

        fs, base = self._fs()
        infos = fs.get_file_info(pyarrow.fs.FileSelector(f"{base}/{rel}", allow_not_found=True))
        return sorted(info.base_name for info in infos if info.type == pyarrow.fs.FileType.Directory)

    @_storage_errors
    def delete_dir(self, rel: str) -> None:
        """Remove the folder `rel` and everything in it."""
        fs, base = self._fs()
        fs.delete_dir(f"{base}/{rel}")


def resolve_storage(value: str | None, home: Path) -> Storage:
    """`--storage`: None -> the home as a shared path; `/abs/path` -> a shared path; `scheme://...`
    -> a remote store. Anything else raises ComputeError with the forms."""
    if value is None:
        return Storage(uri=str(home), shared=True)
    if "://" in value:
        scheme = value.split("://", 1)[0]
        if not scheme.isidentifier() or value.endswith("://"):
            raise ComputeError(f"--storage {value!r}: expected SCHEME://LOCATION, e.g. file:///nfs/autoresearch "
                               "or s3://bucket/prefix")
        return Storage(uri=value, shared=False)
    if not os.path.isabs(value):
        raise ComputeError(f"--storage {value!r}: expected an absolute path every node mounts at the same place "
                           "(/shared/autoresearch), or a URI such as file:///nfs/autoresearch or s3://bucket/prefix")
    return Storage(uri=value, shared=True)


def write_sentinel(storage: Storage, name: str) -> str:
    """The daemon's mark in the storage (a fresh token under `name`), which every node must see."""
    token = uuid.uuid4().hex
    storage.write_text(f"{SENTINEL}-{name}", token)
    return token


class StorageProbe:
    """HealthProbe, run on each node: the storage is reachable there and holds the daemon's sentinel."""

    name = "storage"
    timeout_s = 30.0

    def __init__(self, storage: Storage, sentinel: str, token: str) -> None:
        self.storage = storage
        self.sentinel = sentinel
        self.token = token

    def probe(self, node: NodeTarget) -> HealthReport:
        started = time.time()
        where = f"{'shared path' if self.storage.shared else 'storage'} {self.storage.uri}"
        try:
            seen = self.storage.read_text(f"{SENTINEL}-{self.sentinel}")
        except ComputeError as err:
            check = Check(name="reachable", status=HealthStatus.critical,
                          message=f"{where} is not reachable from this node: {err}")
        else:
            if seen == self.token:
                check = Check(name="sentinel", status=HealthStatus.ok, value=True)
            else:
                check = Check(name="sentinel", status=HealthStatus.critical, value=False,
                              message=f"the daemon's sentinel is not visible in {where} on this node: mount it "
                                      "there at the same path, or give the daemon `--storage URI` of a store "
                                      "every node reaches (docs/ray.md)")
        return HealthReport.from_checks(node.name, self.name, [check], started, time.time() - started)
