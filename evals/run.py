"""Running a suite: each part in turn on one scratch compute daemon; results saved after every
part (so an interrupted full suite keeps what it measured)."""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path

import optuna
from pydantic import BaseModel, ConfigDict, Field

from evals.baselines import in_process, plain_jobs
from evals.env import EvalEnv
from evals.latency import Latency, measure
from evals.records import Arm, FaultKind, RunRecord
from evals.robustness import RobustnessCase, run_case
from evals.stack import SCRIPTED, run_stack
from evals.suites import Part, Suite
from evals.tasks import digits, synthetic

Progress = Callable[[str], None]


class Results(BaseModel):
    """Everything one `python -m evals run` measured."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    suite: Suite
    parts: list[Part]
    llm: str
    """The model behind the LLM arm: "scripted" or provider:model."""
    command: str
    started: str
    wall_s: float = 0.0
    machine: dict[str, str] = Field(default_factory=dict)
    runs: list[RunRecord] = Field(default_factory=list)
    robustness: list[RobustnessCase] = Field(default_factory=list)
    latency: Latency | None = None
    notes: list[str] = Field(default_factory=list)


def machine() -> dict[str, str]:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return {"cpus": str(os.cpu_count()), "python": platform.python_version(), "optuna": optuna.__version__,
            "platform": platform.platform(), "load_1min_at_start": f"{load:.2f}"}  # fmt: skip


def run_suite(
    suite: Suite,
    out: Path,
    *,
    parts: Iterable[Part] = tuple(Part),
    llm: str = SCRIPTED,
    command: str = "",
    progress: Progress = lambda line: print(line, file=sys.stderr, flush=True),
    save: Callable[[Results], None] | None = None,
) -> Results:
    """Run `parts` of `suite`; `save(results)` after each part."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    chosen = [p for p in Part if p in set(parts)]
    results = Results(suite=suite, parts=chosen, llm=llm, command=command,
                      started=datetime.now(timezone.utc).isoformat(timespec="seconds"), machine=machine())  # fmt: skip
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ar-evals-") as scratch, EvalEnv(Path(scratch)) as env:
        for part in chosen:
            started = time.monotonic()
            progress(f"[{suite.name}] {part.value} ...")
            _PARTS[part](env, suite, results, llm, progress, Path(scratch))
            results.wall_s = time.monotonic() - t0
            progress(f"[{suite.name}] {part.value} done in {time.monotonic() - started:.0f} s")
            if save:
                save(results)
    return results


def _add(results: Results, record: RunRecord, part: Part, progress: Progress) -> None:
    record = record.model_copy(update={"part": part.value})
    results.runs.append(record)
    best = min((v for v in record.values if v is not None), default=None)
    progress(f"  {part.value} {record.arm.value} {record.task} seed {record.seed} slots {record.slots} "
             f"pruner {record.pruner}: {len(record.trials)} trials, best {best}, {record.wall_s:.1f} s")  # fmt: skip


def _quality(env: EvalEnv, suite: Suite, results: Results, llm: str, progress: Progress, scratch: Path) -> None:
    for name in suite.functions:
        for seed in range(suite.quality_seeds):
            for arm in (Arm.random, Arm.plain_tpe):
                _add(results, in_process(synthetic(name), arm, seed, suite.quality_trials), Part.quality, progress)


def _stack(env: EvalEnv, suite: Suite, results: Results, llm: str, progress: Progress, scratch: Path) -> None:
    for name in suite.functions:
        task = synthetic(name)
        for seed in range(suite.stack_seeds):
            _add(results, in_process(task, Arm.plain_tpe, seed, suite.stack_trials), Part.stack, progress)
            for slots in suite.stack_slots:
                run = run_stack(env, task, Arm.stack_optuna, seed, suite.stack_trials, slots)
                _add(results, run, Part.stack, progress)
                if slots > 1:
                    _add(results, plain_jobs(task, seed, suite.stack_trials, slots), Part.stack, progress)


def _llm(env: EvalEnv, suite: Suite, results: Results, llm: str, progress: Progress, scratch: Path) -> None:
    for name in suite.functions:
        for seed in range(suite.llm_seeds):
            run = run_stack(env, synthetic(name), Arm.stack_llm, seed, suite.llm_trials, suite.llm_slots, llm=llm)
            _add(results, run, Part.llm, progress)


def _wallclock(env: EvalEnv, suite: Suite, results: Results, llm: str, progress: Progress, scratch: Path) -> None:
    for name, target in suite.wallclock_targets.items():
        task = synthetic(name, steps=5, step_seconds=suite.wallclock_step_s)
        for seed in range(suite.wallclock_seeds):
            for slots in (1, 4):
                run = run_stack(env, task, Arm.stack_optuna, seed, suite.wallclock_max_trials, slots,
                                target_regret=target)  # fmt: skip
                _add(results, run, Part.wallclock, progress)
                run = plain_jobs(task, seed, suite.wallclock_max_trials, slots, target_regret=target)
                _add(results, run, Part.wallclock, progress)


def _pruning(env: EvalEnv, suite: Suite, results: Results, llm: str, progress: Progress, scratch: Path) -> None:
    for deceptive in (False, True):
        task = synthetic("branin", deceptive=deceptive, steps=10, step_seconds=0.05)
        for seed in range(suite.pruning_seeds):
            for pruner in ("none", "median"):
                run = run_stack(env, task, Arm.stack_optuna, seed, suite.pruning_trials, 4, pruner=pruner)
                _add(results, run, Part.pruning, progress)


def _robustness(env: EvalEnv, suite: Suite, results: Results, llm: str, progress: Progress, scratch: Path) -> None:
    for fault in FaultKind:
        for index in range(suite.robustness_campaigns):
            case = run_case(env, fault, index, suite.robustness_trials)
            results.robustness.append(case)
            verdict = "ok" if case.ok else "FAILED: " + "; ".join(case.problems)
            progress(f"  robustness {fault.value} #{index}: {case.faulted} faulted of {case.trials}, {verdict}")


def _latency(env: EvalEnv, suite: Suite, results: Results, llm: str, progress: Progress, scratch: Path) -> None:
    results.latency = measure(env, suite.latency_launches, suite.latency_rounds, scratch / "latency")
    progress(f"  latency: {results.latency}")


def _digits(env: EvalEnv, suite: Suite, results: Results, llm: str, progress: Progress, scratch: Path) -> None:
    task = digits(epochs=suite.digits_epochs)
    for seed in range(suite.digits_seeds):
        _add(results, run_stack(env, task, Arm.stack_optuna, seed, suite.digits_trials, 4), Part.digits, progress)
        _add(results, plain_jobs(task, seed, suite.digits_trials, 4), Part.digits, progress)


_PARTS = {
    Part.quality: _quality,
    Part.stack: _stack,
    Part.llm: _llm,
    Part.wallclock: _wallclock,
    Part.pruning: _pruning,
    Part.robustness: _robustness,
    Part.latency: _latency,
    Part.digits: _digits,
}
