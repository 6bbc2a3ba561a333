"""An attempt's log as the daemon reads and annotates it: the tail a failure is classified on,
the excerpt kept with the attempt, and lines the daemon appends (faults, monitor kills)."""

from __future__ import annotations

import logging
import os

from compute.health import Classification

log = logging.getLogger("compute.daemon")

LOG_TAIL_BYTES = 4096
"""How much of a failed attempt's log the classifier reads."""


def log_tail(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - LOG_TAIL_BYTES))
            return fh.read().decode(errors="replace")
    except OSError:
        return ""


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
