"""The runner's exceptions, in one module every runner module may import (no cycles)."""

from __future__ import annotations

import errno
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autoresearch.campaign import Ledger
    from tracking import Tracker


class RunnerError(Exception):
    """The campaign cannot run; the message says why and what to do next."""


def disk_full(exc: BaseException) -> bool:
    """Whether `exc` (or what caused it) is a full disk or quota, by its codes, not its text:
    ENOSPC/EDQUOT, SQLite's SQLITE_FULL (an MLflow or Optuna error keeps it as its cause), a store
    that said so (`StoreUnavailable`)."""
    from compute.errors import StoreTrouble, StoreUnavailable, sqlite_trouble

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(seen, StoreUnavailable) and seen.trouble is StoreTrouble.full:
            return True
        seen = seen.__cause__ or seen.__context__
    return sqlite_trouble(exc) is StoreTrouble.full


class RunnerBusy(Exception):
    """Another live process runs this campaign; the message names its pid."""

    def __init__(self, name: str, pid: int | None, path: Path) -> None:
        who = f"pid {pid}" if pid else "another process"
        super().__init__(
            f"campaign {name!r} is already being run by {who} (lock {path}). Watch it with "
            f"`autoresearch status {name}`, steer it with `autoresearch resume {name}` (which posts to "
            f"its inbox), or stop that process before starting another runner."
        )
        self.pid = pid


def check_runs_kept(tracker: Tracker, ledger: Ledger, experiment_id: str) -> None:
    """RunnerError when the MLflow store lost this campaign's runs (truncated, deleted or recreated:
    MLflow would silently start an empty one): the experiment is another one, or the latest
    trial's run is not in it."""
    from tracking import RunNotFound

    tracked = [t for t in ledger.trials() if t.mlflow_run_id]
    if not tracked:
        return
    where = tracker.config.tracking_uri
    problem = None
    if ledger.mlflow_experiment_id not in (None, experiment_id):
        problem = f"its experiment is now id {experiment_id}, not {ledger.mlflow_experiment_id}"
    else:
        try:
            tracker.get_run(tracked[-1].mlflow_run_id or "")
        except RunNotFound:
            problem = f"trial {tracked[-1].number}'s run {tracked[-1].mlflow_run_id} is not in it"
    if problem:
        raise RunnerError(
            f"the MLflow store {where} lost campaign {ledger.campaign.name!r}'s runs ({problem}): it was truncated, "
            f"deleted or recreated. Restore it from a backup, or point tracking.uri at the store that holds them; "
            f"the runner does not continue into an empty store."
        )
