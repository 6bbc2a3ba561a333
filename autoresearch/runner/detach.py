"""`autoresearch run CONFIG --detach`: the runner in a background process of its own session, its
output in the campaign folder's `runner.log`, so an agent's shell gets its prompt back at once.

The config is checked here first (bad input fails in the caller, not in a log). The caller then
waits only until the runner holds the campaign's lock (`autoresearch status NAME` answers from
then on), reading the pid the lock file holds rather than probing the lock, which a starting
runner could take for another runner's. A runner that exits before that (another runner holds
the campaign, the campaign ended already) is reported with its exit code and the end of its log.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from autoresearch.campaign import CampaignPaths, load_campaign
from autoresearch.runner.errors import RunnerError
from compute.attempt_logs import read_tail
from compute.paths import resolve_home

_CLI = "from autoresearch.cli import main; main()"


@dataclass(frozen=True)
class Detached:
    """A runner started in the background."""

    campaign: str
    """The campaign's name (`autoresearch status NAME`)."""
    pid: int
    """The runner's pid (it leads a session of its own)."""
    log: Path
    """Its output: progress lines, then the final summary."""
    exit_code: int | None = None
    """None while it runs; its exit code when it ended before it took the campaign (e.g. already completed)."""


def start_detached(config_path: str | os.PathLike[str], *, max_trials: int | None = None,
                   home: str | os.PathLike[str] | None = None, wait_s: float = 120.0) -> Detached:
    """Start `autoresearch run CONFIG` in the background and return once its runner holds the
    campaign (or ended, or `wait_s` passed). ConfigError for a bad config; RunnerError when the
    runner exited with an error before it took the campaign."""
    config = Path(config_path).resolve()
    campaign = load_campaign(config)
    paths = CampaignPaths.of(campaign.name, home)
    paths.root.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-c", _CLI, "run", str(config), *(["--max-trials", str(max_trials)] if max_trials else [])]
    env = {**os.environ, "AUTORESEARCH_HOME": str(resolve_home(home))}
    with open(paths.runner_log, "ab") as log:
        log.write(f"[autoresearch] {time.strftime('%Y-%m-%d %H:%M:%S')} detached runner: {' '.join(argv[3:])}\n".encode())
        log.flush()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True, close_fds=True)  # fmt: skip
    deadline = time.monotonic() + wait_s
    while _lock_pid(paths) != proc.pid and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    code = proc.poll()
    if code not in (None, 0):
        raise RunnerError(f"the detached runner of {campaign.name!r} exited with code {code} before it started: "
                          f"{_tail(paths.runner_log)} (log: {paths.runner_log})")  # fmt: skip
    return Detached(campaign=campaign.name, pid=proc.pid, log=paths.runner_log, exit_code=code)


def _lock_pid(paths: CampaignPaths) -> int | None:
    try:
        text = paths.lock.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _tail(path: Path, limit: int = 800) -> str:
    """The last four non-blank lines of the runner's log (within its last `limit` bytes), on one line."""
    lines = [line for line in read_tail(path, max_bytes=limit).text.splitlines() if line.strip()]
    return " / ".join(lines[-4:])
