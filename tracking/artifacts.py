"""Artifacts whose text is made from files when the write is applied, not when it is queued: a
job's log (capped, with a note where it was cut; credentials redacted) and the diff between two
folders' files. The runner queues the recipe, a few paths (`tracking.outbox`); the outbox's writer
reads the files, off the runner's path."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from compute.attempt_logs import readable_size, text_of
from compute.jobenv import redact_secrets

LOG_ARTIFACT_BYTES = 1_000_000
"""The most of one log stored as an artifact: its first quarter and last three quarters, with a
note of what was cut between them (the whole log stays where the job wrote it)."""
_SKIP = {".git", "__pycache__"}


class FileText(BaseModel):
    """A text file (a job's log), read when the artifact is written."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    kind: Literal["file"] = "file"
    source: str
    """The file's path."""
    max_bytes: int = LOG_ARTIFACT_BYTES
    """Longer files are cut in the middle, with a note saying so."""
    redact: list[str] = []
    """Names of credentials (a job's `secret_env`) whose values (this process's environment) are replaced
    by [REDACTED]."""

    def render(self) -> str:
        path = Path(self.source)
        try:
            with path.open("rb") as f:
                size = readable_size(path, os.fstat(f.fileno()).st_size)  # as far as its secrets were masked
                if size <= self.max_bytes:
                    text = text_of(f.read(size))
                else:
                    head = text_of(f.read(self.max_bytes // 4))
                    f.seek(size - (self.max_bytes - self.max_bytes // 4))
                    tail = text_of(f.read(self.max_bytes - self.max_bytes // 4))
                    cut = size - self.max_bytes
                    text = (f"{head}\n[autoresearch: {cut} of this log's {size} bytes cut here (artifacts keep "
                            f"{self.max_bytes}); the whole log: {path}]\n{tail}")  # fmt: skip
        except FileNotFoundError:
            return f"[autoresearch: {path} did not exist when this artifact was written]\n"
        return redact_secrets(text, self.redact)


class TreeDiff(BaseModel):
    """A unified diff of the files under `paths` in folder `old` against the same paths in `new`."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    kind: Literal["diff"] = "diff"
    old: str
    """The original folder (`a/` in the diff)."""
    new: str
    """The changed folder (`b/`)."""
    paths: list[str]
    """Files or folders, relative to both."""
    max_bytes: int = LOG_ARTIFACT_BYTES
    """A longer diff is cut at the end, with a note saying so."""

    def render(self) -> str:
        old, new = Path(self.old), Path(self.new)
        names = sorted(set(_files(old, self.paths)) | set(_files(new, self.paths)))
        parts: list[str] = []
        for name in names:
            before, after = _lines(old / name), _lines(new / name)
            if before is None or after is None:
                if _bytes(old / name) != _bytes(new / name):
                    parts.append(f"Binary files a/{name} and b/{name} differ\n")
                continue
            parts += difflib.unified_diff(before, after, f"a/{name}", f"b/{name}")
        text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in parts)
        if not text:
            return f"[autoresearch: no difference between {old} and {new} in {', '.join(self.paths)}]\n"
        if len(text) > self.max_bytes:
            text = text[: self.max_bytes] + f"\n[autoresearch: the diff is {len(text)} characters; cut here]\n"
        return text


ArtifactSource = Annotated[FileText | TreeDiff, Field(discriminator="kind")]
"""What a `Tracker.log_artifact` stores."""


def _files(root: Path, paths: Iterable[str]) -> list[str]:
    """The regular files under `paths` in `root` (posix, relative to `root`), caches and .git left out."""
    found: list[str] = []
    for rel in paths:
        top = root / rel
        if top.is_file():
            found.append(str(PurePosixPath(rel)))
            continue
        for folder, dirs, names in os.walk(top):
            dirs[:] = [d for d in dirs if d not in _SKIP]
            found += [str(PurePosixPath((Path(folder) / n).relative_to(root))) for n in names]
    return found


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _lines(path: Path) -> list[str] | None:
    """A text file's lines; [] for a missing file; None for a binary one."""
    data = _bytes(path)
    if data is None:
        return []
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None
