"""`jobs logs` and the reason column, on a job as its JSON view (`compute.reads.job_views`, or a
`Job`'s `model_dump(mode="json")`), without rich or pydantic."""

from __future__ import annotations

import codecs
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compute.attempt_logs import read_chunks, read_tail

from autoresearch.cli._plain import BadInput


_TEXT = "\0text"
"""Stands for the log text in the JSON view, which is streamed in its place."""
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 controls but tab and newline, DEL and C1 controls (a terminal acts on them)."""


def reason(job: dict[str, Any]) -> str:
    """A pending job's waiting reason (with its place in the queue), else its state reason."""
    if job["state"] == "pending" and job["waiting_reason"]:
        return f"{job['waiting_reason']} (queue position {job['queue_position']})"
    return str(job["state_reason"])


def check_attempt(job: dict[str, Any], attempt: int | None, rank: int = 0) -> None:
    if attempt is not None and not any(a["number"] == attempt for a in job["attempts"]):
        raise BadInput(f"job {job['id']} has {len(job['attempts'])} attempt(s); there is no attempt {attempt}")
    nodes = job["spec"]["resources"].get("nodes", 1)
    if not 0 <= rank < nodes:
        raise BadInput(f"job {job['id']} spans {nodes} node(s): --rank must be 0-{nodes - 1}, not {rank}")


def not_started(job: dict[str, Any]) -> str:
    """What `jobs logs` says (on stderr, exit 0) for a job with no attempt yet."""
    return (f"job {job['id']} has not started ({job['state']}: {reason(job)}): no log yet; "
            "use --follow to wait for it")


def log_path(job: dict[str, Any], number: int, rank: int = 0) -> Path:
    """The log of attempt `number`: its gang member `rank`'s for a multi-node job."""
    found = next(a for a in job["attempts"] if a["number"] == number)
    return Path(found["members"][rank]["log_path"] if found.get("members") else found["log_path"])


def write_log_json(job: dict[str, Any], attempt: int | None, tail: int | None, rank: int = 0) -> None:
    """What `jobs logs --json` prints ({job_id, state, attempt, rank, log_path, text, waiting_reason}),
    the text streamed from the log in chunks, never loaded whole."""
    number = attempt or (job["attempts"][-1]["number"] if job["attempts"] else None)
    path = log_path(job, number, rank) if number is not None else None
    view = {"job_id": job["id"], "state": job["state"], "attempt": number, "rank": rank,
            "log_path": None if path is None else str(path), "text": _TEXT, "waiting_reason": job["waiting_reason"]}
    before, after = json.dumps(view, indent=2).split(json.dumps(_TEXT))
    sys.stdout.write(before + '"')
    text = _Text()
    for _, data in _pieces(path, tail, 0) if path is not None and os.path.isfile(path) else ():
        sys.stdout.write(json.dumps(text(data))[1:-1])
    sys.stdout.write(json.dumps(text(b"", final=True))[1:-1] + '"' + after + "\n")
    sys.stdout.flush()


def print_file(path: Path, tail: int | None, offset: int) -> int:
    """Print the file from `offset` (its last `tail` lines only, if given) in chunks; the new offset.
    On a terminal, control characters are shown escaped: a log cannot drive the terminal."""
    text, end, clean = _Text(), offset, neutralize if sys.stdout.isatty() else str
    try:
        for after, data in _pieces(path, tail, offset):
            sys.stdout.write(clean(text(data)))
            end = after
    except FileNotFoundError:
        return offset
    sys.stdout.write(clean(text(b"", final=True)))
    sys.stdout.flush()
    return end


def neutralize(text: str) -> str:
    """`text` with its control characters (escape sequences, NUL...) shown as `\\xNN`, a lone
    carriage return as a new line, so that it prints as it reads and cannot drive a terminal."""
    return _CONTROL.sub(lambda m: "\n" if m[0] == "\r" else f"\\x{ord(m[0]):02x}", text.replace("\r\n", "\n"))


def _pieces(path: Path, tail: int | None, offset: int) -> Iterator[tuple[int, bytes]]:
    """(offset after it, bytes) pieces of the log from `offset`, or of its last `tail` lines."""
    if tail is None:
        yield from read_chunks(path, offset)
    else:
        found = read_tail(path, lines=tail)
        yield found.size, found.data


class _Text:
    """Log bytes to text as they stream: UTF-8 decoded across chunk edges, a cut's NUL bytes dropped."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def __call__(self, data: bytes, final: bool = False) -> str:
        return str(self._decoder.decode(data.replace(b"\0", b""), final))
