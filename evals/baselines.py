"""Baselines that use no autoresearch code: plain Optuna, the way a person would write it.

- `in_process`: the objective is the function itself (random or TPE), sequential.
- `plain_jobs`: plain Optuna TPE whose objective runs the same job subprocess a campaign runs,
  from `slots` threads (ask -> run -> parse the last metric line -> tell), timed per trial.

The TPE settings are pinned (they are also Optuna 5.0's defaults, and the ones the stack's
Optuna policy uses): `TPESampler(seed=seed, multivariate=True, constant_liar=True)`.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import optuna

from evals.records import Arm, RunRecord, TrialPoint
from evals.tasks import Task, suggest


def pinned_sampler(arm: Arm, seed: int) -> optuna.samplers.BaseSampler:
    """The sampler of a plain baseline arm."""
    if arm is Arm.random:
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True)


def in_process(task: Task, arm: Arm, seed: int, trials: int) -> RunRecord:
    """`trials` sequential trials of `arm` (random or plain-tpe) on the task's function."""
    if task.function is None:
        raise ValueError(f"task {task.name} has no in-process function; run it with plain_jobs or the stack")
    fn = task.function
    names = list(task.search_space)
    study = optuna.create_study(direction="minimize", sampler=pinned_sampler(arm, seed))
    points: list[TrialPoint] = []
    started = time.monotonic()
    for _ in range(trials):
        trial = study.ask()
        params = suggest(trial, task.search_space)
        value = fn([params[name] for name in names])
        study.tell(trial, value)
        points.append(TrialPoint(number=trial.number, state="complete", value=value,
                                 ended_s=time.monotonic() - started))  # fmt: skip
    return RunRecord(arm=arm, task=task.name, seed=seed, wall_s=time.monotonic() - started, trials=points)


def plain_jobs(task: Task, seed: int, trials: int, slots: int, *, target_regret: float | None = None) -> RunRecord:
    """Plain Optuna TPE running the task's job as a subprocess per trial, `slots` at a time;
    stops proposing once `target_regret` is reached (running trials finish)."""
    study = optuna.create_study(direction="minimize", sampler=pinned_sampler(Arm.plain_tpe, seed))
    lock = threading.Lock()
    points: list[TrialPoint] = []
    state = {"left": trials, "best": float("inf"), "busy": 0.0}
    started = time.monotonic()

    def reached() -> bool:
        return target_regret is not None and state["best"] - task.minimum <= target_regret

    def worker() -> None:
        while True:
            with lock:
                if state["left"] == 0 or reached():
                    return
                state["left"] -= 1
                trial = study.ask()
                params = suggest(trial, task.search_space)
            argv = task.argv(params, trial.number, seed)
            argv = [sys.executable, *argv[1:]] if argv[0] == "python" else argv
            t0 = time.monotonic()
            done = subprocess.run(argv, cwd=task.cwd, capture_output=True, text=True)
            ran = time.monotonic() - t0
            steps, value = task.parse_output(done.stdout)
            with lock:
                state["busy"] += ran
                if done.returncode == 0 and value is not None:
                    study.tell(trial, value)
                    state["best"] = min(state["best"], value)
                else:
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
                points.append(TrialPoint(
                    number=trial.number, state="complete" if done.returncode == 0 and value is not None else "failed",
                    value=value if done.returncode == 0 else None, ended_s=time.monotonic() - started, steps=steps,
                ))  # fmt: skip

    with ThreadPoolExecutor(slots) as pool:
        for future in [pool.submit(worker) for _ in range(slots)]:
            future.result()
    points.sort(key=lambda p: p.number)
    return RunRecord(
        arm=Arm.plain_tpe_jobs, task=task.name, seed=seed, slots=slots, target_regret=target_regret,
        wall_s=time.monotonic() - started, busy_s=state["busy"],
        useful_s=sum(p.steps for p in points) * task.step_seconds if task.step_seconds else None, trials=points,
    )  # fmt: skip
