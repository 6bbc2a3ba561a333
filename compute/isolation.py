"""Keeping jobs out of the control plane's secrets: `seal_process()`.

The daemon, the runner, the dashboard, the MCP server and the outbox writer hold credentials
(model API keys, `HF_TOKEN`, cloud keys for a job's `secret_env`), and jobs run as the same user
beside them: code a model wrote, in a code-edit campaign. Linux lets a process read another's
`/proc/PID/environ` and `/proc/PID/mem` when it may ptrace it: same uid and the target dumpable,
or CAP_SYS_PTRACE. So each control-plane process seals itself once, at start:

1. **Not dumpable** (`prctl(PR_SET_DUMPABLE, 0)`): a process of the same uid without
   CAP_SYS_PTRACE can no longer read its environ, memory, fds or maps (and no core file is written).
   `execve` makes a process dumpable again, so the jobs it starts are unaffected.
2. **No CAP_SYS_PTRACE for its children** (`prctl(PR_CAPBSET_DROP, CAP_SYS_PTRACE)`, where the
   process may: root or CAP_SETPCAP): dropped from the bounding set, it is gone from every process
   started from here on, a job run as root (or through sudo) included, and cannot be regained.
   The sealed process keeps its own capabilities.
3. **Its environment block scrubbed**: every variable is first copied to the heap (so the process
   and the children it starts keep its whole environment), then the block the kernel shows as
   `/proc/PID/environ` is overwritten with the allowlisted variables jobs see anyway
   (`compute.jobenv.allowed_env`): a reader that still may (the machine's own root with
   CAP_SYS_PTRACE, a debugger) finds no secret there.

What this does not do is in docs/isolation.md: a job running as root still has every other root
power (it can change the files the control plane reads); run the daemon as an unprivileged user,
or jobs in containers, where that matters.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from pathlib import Path

from compute.jobenv import allowed_env

PR_SET_DUMPABLE = 4
PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
CAP_SYS_PTRACE = 19


@dataclass(frozen=True)
class Seal:
    """What `seal_process` could do in this process (each False where the host refused it)."""

    non_dumpable: bool
    """Other processes of the same uid cannot read this one's environ or memory."""
    ptrace_dropped: bool
    """CAP_SYS_PTRACE is out of the bounding set: no process started from here can hold it."""
    environ_scrubbed: bool
    """/proc/PID/environ shows only the allowlisted variables."""


_sealed: Seal | None = None


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _prctl(libc: ctypes.CDLL, option: int, arg: int) -> int:
    return int(libc.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0),
                          ctypes.c_ulong(0)))


def _drop_ptrace(libc: ctypes.CDLL) -> bool:
    if _prctl(libc, PR_CAPBSET_READ, CAP_SYS_PTRACE) == 0:
        return True  # not in the bounding set already
    return _prctl(libc, PR_CAPBSET_DROP, CAP_SYS_PTRACE) == 0


def _environ_block() -> tuple[int, int] | None:
    """The address range of this process's initial environment (`env_start`, `env_end` of /proc/self/stat)."""
    try:
        stat = Path("/proc/self/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # fields[0] is field 3 (state)
    if len(fields) < 49:
        return None
    start, end = int(fields[47]), int(fields[48])
    return (start, end) if 0 < start < end else None


def _scrub_environ() -> bool:
    block = _environ_block()
    if block is None:
        return False
    start, end = block
    size = end - start
    try:
        shown = Path("/proc/self/environ").read_bytes()
    except OSError:
        return False
    if ctypes.string_at(start, size) != shown[:size] or len(shown) != size:
        return False  # not the block we think it is: leave it alone
    for name, value in os.environ.items():  # setenv(3) copies each to the heap: the C environ leaves the block
        os.putenv(name, value)
    kept = b"".join(os.fsencode(f"{k}={v}") + b"\0" for k, v in allowed_env().items())
    kept = kept[:size] if len(kept) <= size else b""
    ctypes.memmove(start, kept + b"\0" * (size - len(kept)), size)
    return True


def seal_process() -> Seal:
    """Seal this process (once; later calls return the first result). Never raises: a host that
    refuses a step (not Linux, no CAP_SETPCAP) leaves that step False."""
    global _sealed
    if _sealed is not None:
        return _sealed
    scrubbed = _scrub_environ()  # first: a non-dumpable process of another uid than root cannot read its own environ
    try:
        libc = _libc()
        non_dumpable = _prctl(libc, PR_SET_DUMPABLE, 0) == 0
        ptrace_dropped = _drop_ptrace(libc)
    except (OSError, AttributeError):  # no libc prctl: not Linux
        non_dumpable = ptrace_dropped = False
    _sealed = Seal(non_dumpable, ptrace_dropped, scrubbed)
    return _sealed
