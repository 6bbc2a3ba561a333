"""An attempt's log as everyone reads it, and as the daemon annotates and caps it.

One home for reading logs, used by every reader (the daemon's failure classifier, the runner's
excerpts, `jobs logs`, the dashboard, the read_logs skill, the metric parser):

- `read_tail`: the end of a log, read backwards from its end in blocks, never more than
  `max_bytes` (plus one block) whatever the log's size or line lengths;
- `read_chunks`: the log from an offset, in bounded chunks (streaming without loading);
- `data_offset`: where the next data is, past a cut (`cap_log`);
- `readable_size`: how far readers may read: a log whose attempt has secrets is shown only up to
  its checked mark, as far as the daemon masked them (compute/log_secrets.py).

`cap_log` bounds a log's disk use (the daemon calls it on every tick for each running attempt,
and once more when the attempt ends, with the `log_max_bytes` setting). Past the cap it keeps
the head (the first half of the cap, to its last whole line), writes `CUT_MARKER` after it,
and frees the middle up to the newest quarter of the cap by punching a hole in the file
(`fallocate(FALLOC_FL_PUNCH_HOLE)`): nothing moves, so the writer (`sh >>`, appending)
goes on undisturbed and every reader's offset stays valid; the cut reads as NUL bytes, which
the readers skip (holes by `SEEK_DATA`, without reading them) and never show. docs/compute.md.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compute.health import Classification

log = logging.getLogger("compute.daemon")

LOG_TAIL_BYTES = 4096
"""How much of a failed attempt's log the classifier reads."""
TAIL_SCAN_BYTES = 32 << 20
"""The most a tail reads back from the end of a log, however few newlines it finds there."""
CHUNK_BYTES = 1 << 20
"""The largest piece `read_chunks` reads at once."""
CUT_MARKER = "[autoresearch] log cut"
"""The start of the line written where a log passing `log_max_bytes` was cut."""
MARK_SUFFIX = ".checked"
"""A log's checked mark (`<log>.checked`): how far it was checked for its attempt's secrets
(compute/log_secrets.py). Readers read a log that has one only up to it."""
_BLOCK = 1 << 16
_PUNCH_HOLE = 0x02 | 0x01
"""FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE."""


@dataclass(frozen=True)
class LogTail:
    """The end of a log, as read by `read_tail`."""

    data: bytes
    """The bytes read (whole lines unless one line fills the window; NUL bytes of a cut included)."""
    start: int
    """The file offset of the first byte of `data`."""
    size: int
    """The file's size when read (where following it goes on)."""

    @property
    def text(self) -> str:
        """`data` as text, without the NUL bytes of a cut."""
        return text_of(self.data)


def read_tail(path: str | os.PathLike[str] | None, *, lines: int | None = None,
              max_bytes: int = TAIL_SCAN_BYTES) -> LogTail:
    """The last `lines` lines of a log (None: every whole line) within its last `max_bytes` bytes,
    read backwards from the end: memory and reads stay under `max_bytes` plus one block whatever
    the log's size. A first line that starts before the window is left out (unless it is the only
    one). Empty when there is no log or it cannot be read."""
    if not path:
        return LogTail(b"", 0, 0)
    try:
        with open(path, "rb") as f:
            size = readable_size(path, os.fstat(f.fileno()).st_size)
            pos, blocks, newlines = size, [], 0
            while pos > 0 and size - pos < max_bytes and (lines is None or newlines <= lines):
                step = min(_BLOCK, pos, max_bytes - (size - pos))
                pos -= step
                f.seek(pos)
                block = f.read(step)
                blocks.append(block)
                newlines += block.count(b"\n")
    except OSError:
        return LogTail(b"", 0, 0)
    data = b"".join(reversed(blocks))
    if pos > 0 and data.find(b"\n", 0, len(data) - 1) >= 0:  # the window starts inside a line
        cut = data.index(b"\n") + 1
        data, pos = data[cut:], pos + cut
    if lines is not None:
        at = len(data) - 1 if data.endswith(b"\n") else len(data)
        for _ in range(lines):
            at = data.rfind(b"\n", 0, at)
            if at < 0:
                break
        cut = min(at + 1, len(data))
        data, pos = data[cut:], pos + cut
    return LogTail(data, pos, size)


def log_tail(path: str | None) -> str:
    """What a failed attempt is classified on: the last `LOG_TAIL_BYTES` of its log."""
    return read_tail(path, max_bytes=LOG_TAIL_BYTES).text


def read_chunks(path: str | os.PathLike[str], start: int = 0, end: int | None = None,
                chunk: int = CHUNK_BYTES) -> Iterator[tuple[int, bytes]]:
    """The log from `start` to `end` (default: its size now), as (offset after the chunk, chunk)
    pieces of at most `chunk` bytes; a cut's hole is skipped, not read. OSError if unreadable.
    Never past the log's checked mark."""
    with open(path, "rb") as f:
        fd = f.fileno()
        size = readable_size(path, os.fstat(fd).st_size)
        end = size if end is None else min(end, size)
        pos = start
        while pos < end:
            pos = data_offset(fd, pos, end)
            if pos >= end:
                yield end, b""
                return
            f.seek(pos)
            data = f.read(min(chunk, end - pos))
            if not data:
                return
            pos += len(data)
            yield pos, data


def mark_path(log: str | os.PathLike[str]) -> str:
    """Where a log's checked mark is kept."""
    return f"{os.fspath(log)}{MARK_SUFFIX}"


def readable_size(log: str | os.PathLike[str], size: int) -> int:
    """How much of a log of `size` bytes readers may show: all of it, or up to its checked mark."""
    try:
        with open(mark_path(log)) as f:
            return min(size, int(f.read()))
    except FileNotFoundError:
        return size
    except (OSError, ValueError):
        return 0  # a mark being replaced or unreadable: show nothing rather than a secret


def data_offset(fd: int, pos: int, end: int) -> int:
    """The first offset at or after `pos` that holds data (past a hole), at most `end`."""
    try:
        return min(os.lseek(fd, pos, os.SEEK_DATA), end)
    except OSError as err:
        return end if err.errno == errno.ENXIO else pos  # ENXIO: a hole to the end; else no SEEK_DATA here


def text_of(data: bytes) -> str:
    """Log bytes as text, without the NUL bytes of a cut."""
    return (data.replace(b"\0", b"") if b"\0" in data else data).decode(errors="replace")


def cap_log(path: str, max_bytes: int) -> bool:
    """Keep a log's disk use under about `max_bytes` (see the module docstring); True when it cut now.
    Cuts when the log holds more than `max_bytes` on disk: head and `CUT_MARKER` kept, the middle up
    to its newest `max_bytes // 4` freed."""
    try:
        st = os.stat(path)
        if min(st.st_size, st.st_blocks * 512) <= max_bytes:  # (blocks may count space reserved past the end)
            return False
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return False
    try:
        size = os.fstat(fd).st_size
        marker_at, marker = _marker(fd, max_bytes)
        start = marker_at + len(marker)
        tail_at = max(size - max_bytes // 4, start)
        newline = os.pread(fd, _BLOCK, tail_at).find(b"\n")
        cut_end = tail_at + newline + 1 if newline >= 0 else tail_at  # the kept tail starts with a whole line
        if cut_end <= start:
            return False
        if os.pread(fd, len(marker), marker_at) != marker:
            os.pwrite(fd, marker, marker_at)
        _punch(fd, start, cut_end - start)
        return True
    except OSError as err:
        _warn_once(path, f"could not cap it at log_max_bytes={max_bytes}: {err}")
        return False
    finally:
        os.close(fd)


def _marker(fd: int, max_bytes: int) -> tuple[int, bytes]:
    """Where the cut marker goes (after the last whole line of the head, the first half of the cap),
    and the marker."""
    head = max_bytes // 2
    window = os.pread(fd, min(_BLOCK, head), head - min(_BLOCK, head))
    newline = window.rfind(b"\n")
    at = head - len(window) + newline + 1 if newline >= 0 else head
    lead = b"" if newline >= 0 else b"\n"  # a head ending inside a line: the marker goes on its own line
    text = (f"{CUT_MARKER}: it passed log_max_bytes ({max_bytes} bytes on disk): the middle is left out, "
            "the head above and the newest lines below are kept\n")
    return at, lead + text.encode()


@functools.lru_cache(maxsize=256)
def _warn_once(path: str, what: str) -> None:
    log.warning("log %s: %s", path, what)


def _punch(fd: int, offset: int, length: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    if libc.fallocate(fd, _PUNCH_HOLE, offset, length) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"fallocate(PUNCH_HOLE) failed: {os.strerror(code)}")


def excerpt(tail: str, verdict: Classification | None) -> str:
    """The last 20 lines of a failed attempt's log, after the classifier's verdict on them."""
    lines = tail.splitlines()[-20:]
    if verdict is not None:
        said = f"[autoresearch] {verdict.failure_class.value} failure (rule {verdict.rule}): {verdict.explanation}"
        lines = [said, *([f"[autoresearch] matched: {verdict.line}"] if verdict.line else []), *lines]
    return "\n".join(lines)


def append_log(path: str, lines: list[str]) -> None:
    """Append lines to an attempt's log, creating it (and its folder) if the attempt has not yet:
    a Ray attempt stopped as hung before its node agent spawned it still gets the marker."""
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "a") as fh:
            fh.write("".join(f"{line}\n" for line in lines))
    except OSError:
        log.warning("could not append to %s", path)
