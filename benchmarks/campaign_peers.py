"""The peer arms of the campaign benchmark: what a user would pick instead of autoresearch.

Both run the campaign's own command (`Campaign.render_command`) as a subprocess per trial,
parse its last `objective:` line, and sample with the same pinned TPE
(`TPESampler(seed, multivariate=True, constant_liar=True)`, Optuna 5.0's defaults) through the
same search-space definition (`spec.suggest`, define-by-run).

- `optuna`: an in-memory Optuna study; `parallel` threads each ask, run the job, tell.
- `ray-tune`: `Tuner` with `OptunaSearch` (that sampler), `max_concurrent_trials=parallel`, a
  function trainable that runs the job and reports its metric once; Tune's default loggers
  and experiment checkpointing stay on (what a user gets). Ray is started once per benchmark
  (`RaySession`: a private local instance with `num_cpus=parallel`, no dashboard, quiet logs);
  its start-up is not timed, as the stack's daemon start-up is not.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import optuna

from benchmarks.campaign_timing import Span

ROOT = Path(__file__).resolve().parent.parent
STARTS = 3
"""Tries to start Ray."""
TRIAL_KEY = "_optuna_trial_number"
"""The config entry that carries the Optuna trial number to a Ray Tune trainable."""


@dataclass(frozen=True)
class ArmRun:
    """One arm, one seed."""

    arm: str
    """autoresearch, optuna or ray-tune."""
    seed: int
    wall_s: float
    """First proposal -> last result."""
    best: float
    """The best objective value found (minimised)."""
    completed: int
    """Trials that ended with a value."""
    spans: tuple[Span, ...]
    """Every job's start and end (see campaign_timing)."""
    drained_s: float | None = None
    """Our stack only: first proposal -> the last MLflow write applied (the runner returns
    before that and leaves its pending writes to a detached writer). The peers write no MLflow."""
    began_at: float | None = None
    """When the arm was started (Unix seconds): with `spans`, its time before the first job and
    after the last one."""


def tpe(seed: int | None) -> optuna.samplers.TPESampler:
    return optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True)


def job_argv(campaign: Any, params: dict[str, Any], number: int) -> list[str]:
    argv = campaign.render_command(params, number)
    return [sys.executable, *argv[1:]] if argv[0] in ("python", "python3") else argv


def run_job(argv: list[str], cwd: str) -> tuple[float, Span]:
    """Run one job to its end; its last `objective:` value and its span."""
    start = time.time()
    out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=True).stdout
    end = time.time()
    lines = [line for line in out.splitlines() if line.startswith("objective:")]
    if not lines:
        raise RuntimeError(f"job {argv} printed no `objective:` line; its output ends: {out[-300:]!r}")
    return float(lines[-1].split()[1]), Span(start, end)


def optuna_loop(campaign: Any, seed: int) -> ArmRun:
    """`max_parallel` threads, each: ask -> run the job -> tell, until `max_trials` were asked."""
    study = optuna.create_study(direction="minimize", sampler=tpe(campaign.policy.seed))
    lock = threading.Lock()
    left = [campaign.budget.max_trials]
    spans: list[Span] = []

    def worker() -> None:
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            trial = study.ask()
            params = {name: spec.suggest(trial, name) for name, spec in campaign.search_space.items()}
            value, span = run_job(job_argv(campaign, params, trial.number), str(campaign.cwd))
            study.tell(trial, value)
            spans.append(span)

    began, started = time.time(), time.monotonic()
    with ThreadPoolExecutor(campaign.budget.max_parallel) as pool:
        for future in [pool.submit(worker) for _ in range(campaign.budget.max_parallel)]:
            future.result()
    wall = time.monotonic() - started
    done = sum(t.state is optuna.trial.TrialState.COMPLETE for t in study.trials)
    return ArmRun("optuna", seed, wall, study.best_value, done, tuple(spans), began_at=began)


class RaySession:
    """`with RaySession(num_cpus):` one private local Ray instance for the whole benchmark."""

    def __init__(self, num_cpus: int) -> None:
        self.num_cpus = num_cpus
        self._tmp: str | None = None
        self._saved_path: str | None = None

    def __enter__(self) -> RaySession:
        import ray

        self._saved_path = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [self._saved_path])])  # for Ray workers
        os.environ.setdefault("RAY_DEDUP_LOGS", "0")
        os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")
        failures: list[Exception] = []
        while len(failures) < STARTS:
            self._tmp = tempfile.mkdtemp(prefix="rtb-", dir="/tmp")  # short: Ray's socket paths have a length limit
            try:
                ray.init(address="local", num_cpus=self.num_cpus, num_gpus=0, include_dashboard=False,
                         log_to_driver=False, logging_level=logging.ERROR, _temp_dir=self._tmp)  # fmt: skip
                return self
            except Exception as exc:  # Ray gives its raylet 30 s to register: too little on a loaded machine
                failures.append(exc)
                ray.shutdown()
                shutil.rmtree(self._tmp, ignore_errors=True)
        raise RuntimeError(f"ray-tune arm: a local Ray instance did not start in {STARTS} tries ({failures[-1]}); "
                           "on a loaded machine run again, or leave ray-tune out of --peers") from failures[-1]

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        import ray

        ray.shutdown()
        if self._tmp:
            shutil.rmtree(self._tmp, ignore_errors=True)
        if self._saved_path is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = self._saved_path


class DefineByRun:
    """The campaign's search space as an Optuna define-by-run function (module level: Tune pickles
    its searcher, and with it this, into each experiment checkpoint)."""

    def __init__(self, space: dict[str, Any]) -> None:
        self.space = space

    def __call__(self, trial: optuna.Trial) -> dict[str, int]:
        for name, spec in self.space.items():
            spec.suggest(trial, name)
        return {TRIAL_KEY: trial.number}  # a constant Tune adds to the trial's config


def ray_tune(campaign: Any, seed: int, storage: Path) -> ArmRun:
    """The campaign through Ray Tune; needs a running `RaySession`."""
    from ray import tune
    from ray.tune.search.optuna import OptunaSearch

    space = dict(campaign.search_space)
    cwd, command, name, base_seed = str(campaign.cwd), list(campaign.command), campaign.name, campaign.policy.seed or 0
    python = sys.executable

    def trainable(config: dict[str, Any]) -> None:
        # Campaign.render_command's values, rendered here so that no Ray worker imports autoresearch
        params = {k: v for k, v in config.items() if k != TRIAL_KEY}
        number = config[TRIAL_KEY]
        values = {**params, "trial": number, "seed": base_seed + number, "campaign": name}
        argv = [item.format_map(values) for item in command]
        value, span = run_job([python, *argv[1:]] if argv[0] in ("python", "python3") else argv, cwd)
        tune.report({"objective": value, "job_start": span.start, "job_end": span.end})

    searcher = OptunaSearch(DefineByRun(space), metric="objective", mode="min", sampler=tpe(campaign.policy.seed))
    tuner = tune.Tuner(
        trainable,
        tune_config=tune.TuneConfig(search_alg=searcher, num_samples=campaign.budget.max_trials,
                                    max_concurrent_trials=campaign.budget.max_parallel),  # fmt: skip
        run_config=tune.RunConfig(name=campaign.name, storage_path=str(storage), verbose=0),
    )
    began, started = time.time(), time.monotonic()
    grid = tuner.fit()
    wall = time.monotonic() - started
    results = [r for r in grid if r.error is None and "objective" in r.metrics]
    if grid.errors:
        raise RuntimeError(f"ray-tune seed {seed}: {len(grid.errors)} trial(s) failed, the first: {grid.errors[0]}")
    spans = tuple(Span(r.metrics["job_start"], r.metrics["job_end"]) for r in results)
    best = min(r.metrics["objective"] for r in results)
    return ArmRun("ray-tune", seed, wall, best, len(results), spans, began_at=began)
