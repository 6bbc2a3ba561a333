"""The read_logs skill: a job's log, bounded, as a tail, a byte range or grep matches."""

from __future__ import annotations

import enum
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, BinaryIO

import regex as re
from pydantic import Field

from compute.attempt_logs import read_tail, readable_size, text_of
from compute.jobenv import redact_secrets

from skills.bounds import cut_marker, cut_middle
from skills.context import SkillContext
from skills.jobs import JobId
from skills.models import MAX_INDEX, ErrorCode, Index, SkillFailure, SkillInput, SkillOutput
from skills.views import compute_errors, visible_job

MAX_LINE_CHARS = 2000
"""Longer lines are cut in the middle with a `[... N chars cut ...]` marker."""
_RESERVED_BYTES = 1200
"""Room left in the output bound for the fields around the text."""
_MAX_SCAN_BYTES = 32 << 20
"""The tail reads at most this much from the end; grep scans at most this much."""
GREP_LINE_BYTES = 1 << 20
"""Grep matches the first this many bytes of a line (the rest of a longer line is passed over)."""
GREP_TIMEOUT_S = 2.0
"""The most time one grep's regex may spend matching, over all lines (the `regex` package's
timeout; matching releases the GIL, so other calls of the same server go on meanwhile)."""


class LogMode(str, enum.Enum):
    tail = "tail"
    range = "range"
    grep = "grep"


class ReadLogsInput(SkillInput):
    job_id: JobId
    """The job id."""
    attempt: Annotated[int, Field(ge=1, le=MAX_INDEX)] | None = None
    """Attempt number (1, 2, ...); default: the latest."""
    rank: Annotated[int, Field(ge=0, le=1023)] = 0
    """For a multi-node job: the member (node rank) whose log to read; default 0."""
    tail: Annotated[int, Field(ge=1, le=100_000)] | None = None
    """Return the last N lines (the default mode, N=100)."""
    byte_start: Index | None = None
    """Return the bytes from this offset (a byte range); page on with next_byte."""
    byte_end: Index | None = None
    """End of the byte range (exclusive); default: as much as fits."""
    grep: Annotated[str, Field(min_length=1, max_length=500)] | None = None
    """Return the lines matching this regex (Python syntax), with line numbers; matching is time-bounded."""
    max_matches: Annotated[int, Field(ge=1, le=10_000)] = 200
    """With grep: at most this many matching lines (the first ones)."""


class ReadLogsOutput(SkillOutput):
    job_id: str
    attempt: int
    rank: int = 0
    """The gang member (node rank) whose log this is."""
    log_path: str
    size_bytes: int
    """Size of the log file now (it may still grow)."""
    mode: LogMode
    text: str
    """The log text; `[... N lines cut ...]` markers show where lines were left out."""
    start_byte: int
    """Offset of the first byte `text` covers."""
    next_byte: int | None = None
    """Range mode: the offset to continue from; None at the end of the file."""
    matches: int | None = None
    """Grep mode: how many lines matched in all."""


def read_logs(ctx: SkillContext, args: ReadLogsInput) -> ReadLogsOutput:
    """Read a job's log (stdout and stderr together): last N lines, a byte range, or regex matches.

    Default: the last 100 lines of the latest attempt. Output is bounded; `[... N lines cut ...]`
    markers show where lines were left out.
    """
    modes = [name for name, value in (("tail", args.tail), ("byte_start", args.byte_start), ("grep", args.grep))
             if value is not None]  # fmt: skip
    if len(modes) > 1:
        raise SkillFailure(
            ErrorCode.invalid_arguments,
            f"give one of tail, byte_start or grep, not {' and '.join(modes)}",
            field=modes[1],
        )
    if args.byte_end is not None and args.byte_start is None:
        raise SkillFailure(ErrorCode.invalid_arguments, "byte_end needs byte_start", field="byte_end")
    path, attempt, secrets = _log_file(ctx, args)
    size = readable_size(path, path.stat().st_size)  # never past what was checked for secrets
    budget = max(ctx.max_output_bytes - _RESERVED_BYTES - len(json.dumps(str(path))), 200)
    common = dict(job_id=args.job_id, attempt=attempt, rank=args.rank, log_path=str(path), size_bytes=size)
    if args.grep is not None:
        try:
            regex = re.compile(args.grep)
        except re.error as exc:
            raise SkillFailure(ErrorCode.invalid_arguments, f"grep is not a valid regex: {exc}", field="grep") from exc
        try:
            text, matches = _grep(path, size, regex, args.max_matches, budget)
        except TimeoutError as exc:
            raise SkillFailure(
                ErrorCode.invalid_arguments,
                f"grep {args.grep!r} took more than {GREP_TIMEOUT_S:g}s ({exc}); it likely backtracks without end "
                "(nested quantifiers such as (a+)+): write a simpler regex, e.g. a literal word",
                field="grep",
            ) from exc
        text = redact_secrets(text, secrets)
        return ReadLogsOutput(**common, mode=LogMode.grep, text=text, start_byte=0, matches=matches)
    if args.byte_start is not None:
        start = min(args.byte_start, size)
        end = min(args.byte_end if args.byte_end is not None else size, size, start + budget // 2)
        with path.open("rb") as f:
            f.seek(start)
            data = f.read(max(end - start, 0))
        while _json_len(text := text_of(data)) > budget:
            data = data[: len(data) // 2]  # heavy JSON escaping (control bytes): return less
        end = start + len(data)
        text = redact_secrets(text, secrets)
        return ReadLogsOutput(**common, mode=LogMode.range, text=text, start_byte=start, next_byte=end if end < size else None)
    text, start = _tail(path, args.tail or 100, budget)
    text = redact_secrets(text, secrets)
    return ReadLogsOutput(**common, mode=LogMode.tail, text=text, start_byte=start)


def _log_file(ctx: SkillContext, args: ReadLogsInput) -> tuple[Path, int, list[str]]:
    """The log's path, its attempt number, and the names of the job's credentials (redacted from it)."""
    job = visible_job(ctx, args.job_id)
    with compute_errors():
        if not job.attempts:
            raise SkillFailure(
                ErrorCode.not_found,
                f"job {args.job_id} is {job.state.value} and has not started, so it has no log yet; "
                "wait_for_jobs returns when it starts",
                field="job_id",
            )
        numbers = [a.number for a in job.attempts]
        attempt = args.attempt if args.attempt is not None else numbers[-1]
        if attempt not in numbers:
            raise SkillFailure(
                ErrorCode.not_found,
                f"job {args.job_id} has attempts {numbers}, not {attempt}; omit attempt for the latest",
                field="attempt",
            )
        nodes = job.spec.resources.nodes
        if args.rank >= nodes:
            raise SkillFailure(ErrorCode.invalid_arguments,
                               f"job {args.job_id} spans {nodes} node(s): rank must be 0-{nodes - 1}, not {args.rank}",
                               field="rank")
        path = Path(ctx.client.log_path(args.job_id, attempt, args.rank))
    if not path.exists():
        raise SkillFailure(ErrorCode.not_found, f"the log of job {args.job_id} attempt {attempt} is gone: {path}")
    return path, attempt, list(job.spec.secret_env)


def _json_len(text: str) -> int:
    return len(json.dumps(text, ensure_ascii=False).encode())


def _tail(path: Path, n: int, budget: int) -> tuple[str, int]:
    """The last `n` lines that fit in `budget`, and the offset where they start."""
    tail = read_tail(path, lines=n, max_bytes=_MAX_SCAN_BYTES)
    lines = tail.data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    kept: list[str] = []
    used = 0
    for raw in reversed(lines):
        line = cut_middle(text_of(raw), MAX_LINE_CHARS)
        cost = _json_len(line) + 1
        if used + cost > budget - 40:
            break
        kept.append(line)
        used += cost
    cut = len(lines) - len(kept)
    start = tail.start + sum(len(line) + 1 for line in lines[:cut])
    kept.reverse()
    if cut:
        kept.insert(0, cut_marker(cut, "lines"))
    return "\n".join(kept), start


def _grep(path: Path, size: int, regex: re.Pattern[str], max_matches: int, budget: int) -> tuple[str, int]:
    """Matching lines of the first `size` bytes that fit `budget`, and how many matched; TimeoutError
    past GREP_TIMEOUT_S."""
    deadline = time.monotonic() + GREP_TIMEOUT_S
    shown: list[str] = []
    used = matches = unshown = scanned = 0
    with path.open("rb") as f:
        for number, (length, raw) in enumerate(_lines(f, size), start=1):
            scanned += length
            if scanned > _MAX_SCAN_BYTES:
                shown.append(f"[... grep stopped after {_MAX_SCAN_BYTES} bytes; use byte_start to read further ...]")
                break
            line = text_of(raw).rstrip("\n")
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"stopped at line {number}")
            if not regex.search(line, timeout=left, concurrent=True):
                continue
            matches += 1
            entry = f"{number}: {cut_middle(line, MAX_LINE_CHARS)}"
            cost = _json_len(entry) + 1
            if len(shown) >= max_matches or used + cost > budget - 60:
                unshown += 1
                continue
            shown.append(entry)
            used += cost
    if unshown:
        shown.append(cut_marker(unshown, "matching lines") + " (narrow the regex or page with byte_start)")
    return "\n".join(shown), matches


def _lines(f: BinaryIO, end: int) -> Iterator[tuple[int, bytes]]:
    """(its size, its first `GREP_LINE_BYTES`) of each line up to offset `end`: a huge line is read on
    in bounded pieces, never held whole (at most `_MAX_SCAN_BYTES` of it: then the grep stops)."""

    def piece() -> bytes:
        return f.readline(min(GREP_LINE_BYTES, end - f.tell()))

    while raw := piece():
        size = len(raw)
        while not raw.endswith(b"\n") and size <= _MAX_SCAN_BYTES and (more := piece()):
            size += len(more)
            if more.endswith(b"\n"):
                break
        yield size, raw
