"""Run a probe's subprocess with a hard timeout, in its own process group."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

TAIL_CHARS = 2000
"""How much of a command's output a check message keeps."""


@dataclass(frozen=True, slots=True)
class ProcResult:
    exit_code: int | None
    """Exit code; negative for death by signal; None when it timed out or could not start."""
    output: str
    """stdout and stderr together (the whole output; callers keep a tail)."""
    timed_out: bool = False
    start_error: str = ""
    """Why the command could not start (not found, not executable), if it could not."""
    duration_s: float = 0.0


def run_command(
    argv: Sequence[str], timeout_s: float, env: Mapping[str, str] | None = None, cwd: str | None = None
) -> ProcResult:
    """Run `argv`; past `timeout_s` kill its whole process group (SIGKILL) and say so."""
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=None if env is None else dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        return ProcResult(None, "", start_error=f"{type(exc).__name__}: {exc}")
    try:
        out, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, _ = proc.communicate()
        text = out.decode(errors="replace")
        return ProcResult(None, text, timed_out=True, duration_s=time.monotonic() - started)
    return ProcResult(proc.returncode, out.decode(errors="replace"), duration_s=time.monotonic() - started)


def tail(text: str, chars: int = TAIL_CHARS) -> str:
    """The last `chars` characters of `text`, cut at a line start when possible."""
    text = text.rstrip()
    if len(text) <= chars:
        return text
    cut = text[-chars:]
    newline = cut.find("\n")
    return cut[newline + 1 :] if 0 <= newline < chars // 2 else cut
