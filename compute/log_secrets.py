"""Secrets in logs: the daemon masks an attempt's `secret_env` values in its logs, in place, so
that every reader sees them masked, whoever runs it and whatever its environment holds.

At launch the daemon knows the values it passes to the attempt. It keeps them in
`run/<key>.secrets` (owner-only, as the attempt script that holds them already is; removed when
the attempt ends, read back by a restarted daemon) and starts each log's checked mark
(`<log>.checked`, `compute.attempt_logs.MARK_SUFFIX`) at 0. On every tick, and when the attempt
ends, it scans what the logs gained, overwrites each value with a mask of the same length
(`mask`: no byte moves, so the writer appending and every reader's offset are undisturbed), and
moves the mark: to the end once the attempt ended, else to the end less the longest value's
length (a value being written may be cut there). Readers (`compute.attempt_logs`) read a log that
has a mark only up to it: what they show lags the log by at most one tick and never holds a value.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from compute.attempt_logs import CHUNK_BYTES, mark_path

MIN_SECRET_CHARS = 4
"""Shorter values are not masked (as `compute.jobenv.redact_secrets`): they would mask common words."""


def mask(length: int) -> bytes:
    """What a value of `length` bytes becomes: `[REDACTED***]` (or `****` when shorter than that)."""
    return b"*" * length if length < 10 else b"[REDACTED" + b"*" * (length - 10) + b"]"


class SecretMasker:
    """Masks the secret values of the daemon's running attempts in their logs."""

    def __init__(self, run_dir: Path) -> None:
        self._run_dir = run_dir
        self._values: dict[str, list[bytes]] = {}
        """Per attempt key: its values, longest first (loaded from its file after a restart)."""

    def _file(self, key: str) -> Path:
        return self._run_dir / f"{key}.secrets"

    def begin(self, key: str, values: Iterable[str], logs: Iterable[str]) -> None:
        """Before the attempt starts: keep its values and mark its logs as checked up to 0."""
        kept = sorted({v.encode() for v in values if len(v) >= MIN_SECRET_CHARS}, key=len, reverse=True)
        if not kept:
            return
        fd = os.open(self._file(key), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump([v.decode() for v in kept], f)
        for log in logs:
            _write_mark(log, 0)
        self._values[key] = kept

    def scan(self, key: str, logs: Iterable[str], ended: bool) -> None:
        """Mask the values in what the logs gained since the last scan and move their marks."""
        values = self._values.get(key)
        if values is None:
            try:
                values = [v.encode() for v in json.loads(self._file(key).read_text())]
            except (OSError, ValueError):
                values = []  # an attempt without secrets
            self._values[key] = values
        if values:
            for log in logs:
                _scan_log(log, values, ended)

    def release(self, key: str) -> None:
        """The attempt ended (and was scanned to its end): forget its values."""
        self._values.pop(key, None)
        self._file(key).unlink(missing_ok=True)


def _scan_log(log: str, values: list[bytes], ended: bool) -> None:
    try:
        mark = int(Path(mark_path(log)).read_text())
        fd = os.open(log, os.O_RDWR)
    except (OSError, ValueError):
        return
    try:
        size = os.fstat(fd).st_size
        overlap = len(values[0]) - 1  # a value across two chunks is in the second one whole
        pos = mark
        while pos < size:
            data = bytearray(os.pread(fd, min(CHUNK_BYTES, size - pos), pos))
            if not data:
                break
            for value in values:
                found = data.find(value)
                while found >= 0:
                    os.pwrite(fd, mask(len(value)), pos + found)
                    data[found : found + len(value)] = mask(len(value))
                    found = data.find(value, found + len(value))
            if pos + len(data) >= size:
                break
            pos += max(len(data) - overlap, 1)
    finally:
        os.close(fd)
    _write_mark(log, size if ended else max(mark, size - overlap))


def _write_mark(log: str, offset: int) -> None:
    """Set the log's checked mark (written whole: a new file renamed over the old one)."""
    path = mark_path(log)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        f.write(str(offset))
    os.replace(tmp, path)
