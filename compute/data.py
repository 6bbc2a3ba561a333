"""Datasets: named read-only inputs of a job, and how each is named, found and fingerprinted.

A dataset is a name and an absolute path (a file or a folder). The job sees it as
`AR_DATA_<NAME>` (the name upper-cased); in a container the path is mounted read-only at
`/data/<name>` and the variable names that path. Anything a FUSE mount or fsspec presents
as a local path (an s3fs/gcsfuse bucket, an NFS share) works as a path.

`dataset_digest` fingerprints what a run read: a SHA-256 of the content for files and
folders up to `DIGEST_CONTENT_LIMIT` bytes in all, else `size+mtime` (so a 1 TB dataset on a
FUSE mount is not read to name it).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from compute.container import DATA_MOUNT_ROOT
from compute.errors import ComputeError
from compute.jobenv import AR_DATA_

DATA_ENV_PREFIX = AR_DATA_.name
DIGEST_CONTENT_LIMIT = 64 * 1024 * 1024
"""Datasets up to this many bytes (all files together) are digested by content."""
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def validate_data(data: Mapping[str, str]) -> dict[str, str]:
    """Check dataset names (a letter, then letters, digits, `_`) and absolute paths; ValueError else."""
    out: dict[str, str] = {}
    for name, path in data.items():
        if not _NAME.fullmatch(name):
            raise ValueError(f"dataset name {name!r} must start with a letter and hold only letters, digits and '_' "
                             "(it becomes AR_DATA_<NAME> and /data/<name>)")
        if not path or "\0" in path or not Path(path).is_absolute():
            raise ValueError(f"dataset {name!r}: path {path!r} must be absolute (campaign configs resolve "
                             "relative ones against the config file)")
        out[name] = path
    if len({n.upper() for n in out}) != len(out):
        raise ValueError(f"dataset names {sorted(out)} differ only in case: AR_DATA_<NAME> would collide")
    return out


def data_env(data: Mapping[str, str], *, in_container: bool) -> dict[str, str]:
    """`AR_DATA_<NAME>` for each dataset: its host path, or `/data/<name>` inside a container."""
    return {f"{DATA_ENV_PREFIX}{name.upper()}": f"{DATA_MOUNT_ROOT}/{name}" if in_container else path
            for name, path in data.items()}


def check_data_exists(data: Mapping[str, str], where: str) -> None:
    """ComputeError naming the first dataset whose path does not exist (`where`: the job, the field)."""
    for name, path in data.items():
        if not os.path.exists(path):
            raise ComputeError(f"{where}: dataset {name!r} path {path} does not exist; create it, mount it, or fix "
                               "the path")


def dataset_digest(path: str, limit: int = DIGEST_CONTENT_LIMIT) -> str:
    """`sha256:<hex>` of the content (files in sorted path order) when at most `limit` bytes,
    else `size+mtime:<bytes>:<newest mtime ns>`. Raises OSError if the path cannot be read."""
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(2, "No such file or directory", path)
    files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    stats = [(p, p.stat()) for p in files]
    size = sum(s.st_size for _, s in stats)
    if size > limit:
        newest = max((s.st_mtime_ns for _, s in stats), default=root.stat().st_mtime_ns)
        return f"size+mtime:{size}:{newest}"
    digest = hashlib.sha256()
    for p, _ in stats:
        digest.update(str(p.relative_to(root) if p != root else p.name).encode() + b"\0")
        with open(p, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"
