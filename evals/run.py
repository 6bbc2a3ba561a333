"""Running a suite: each part in turn on one scratch compute daemon. Results are checkpointed
after every measurement (one run of one arm with one seed, one robustness campaign), so an
interrupted full suite keeps what it measured and `--resume` runs only what is missing."""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, UTC
from functools import partial
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


Unit = tuple[str, Callable[[], "RunRecord | RobustnessCase | Latency"]]
"""One measurement of a part: its key (what `--resume` matches) and how to run it."""


def record_key(part: str, arm: Arm, task: str, seed: int, slots: int = 1, pruner: str = "none",
               target_regret: float | None = None) -> str:  # fmt: skip
    return f"{part}/{arm.value}/{task}/seed={seed}/slots={slots}/pruner={pruner}/target={target_regret}"


def done_keys(results: Results) -> set[str]:
    """The keys of the measurements `results` already holds."""
    keys = {record_key(r.part, r.arm, r.task, r.seed, r.slots, r.pruner, r.target_regret) for r in results.runs}
    keys |= {f"robustness/{c.fault.value}/{c.index}" for c in results.robustness}
    return keys | ({"latency"} if results.latency else set())


def run_suite(
    suite: Suite,
    out: Path,
    *,
    parts: Iterable[Part] = tuple(Part),
    llm: str = SCRIPTED,
    command: str = "",
    progress: Progress = lambda line: print(line, file=sys.stderr, flush=True),
    save: Callable[[Results], object] | None = None,
    checkpoint: Callable[[Results], object] | None = None,
    resume: Results | None = None,
) -> Results:
    """Run `parts` of `suite`: `checkpoint(results)` after each measurement, `save(results)` after
    each part. With `resume` (an earlier, interrupted run of the same suite), its measurements are
    kept and only the missing ones run."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    chosen = [p for p in Part if p in set(parts)]
    if resume is not None:
        if resume.suite != suite:
            raise ValueError(f"--resume: those results are of suite {resume.suite.name!r} with other counts; "
                             f"resume with --suite {resume.suite.name}, or start a new --out folder")  # fmt: skip
        results = resume.model_copy(update={"parts": [p for p in Part if p in set(resume.parts) | set(chosen)],
                                            "command": command, "llm": llm}, deep=True)  # fmt: skip
        results.notes.append(f"resumed {datetime.now(UTC).isoformat(timespec='seconds')} "
                             f"with {len(done_keys(resume))} measurements kept")  # fmt: skip
    else:
        results = Results(suite=suite, parts=chosen, llm=llm, command=command,
                          started=datetime.now(UTC).isoformat(timespec="seconds"), machine=machine())  # fmt: skip
    done = done_keys(results)
    t0 = time.monotonic() - results.wall_s
    with tempfile.TemporaryDirectory(prefix="ar-evals-") as scratch, EvalEnv(Path(scratch)) as env:
        for part in chosen:
            started = time.monotonic()
            progress(f"[{suite.name}] {part.value} ...")
            for key, measure_one in _PARTS[part](env, suite, llm, Path(scratch)):
                if key in done:
                    continue
                _add(results, part, measure_one(), progress)
                results.wall_s = time.monotonic() - t0
                if checkpoint:
                    checkpoint(results)
            progress(f"[{suite.name}] {part.value} done in {time.monotonic() - started:.0f} s")
            if save:
                save(results)
    return results


def _add(results: Results, part: Part, measured: RunRecord | RobustnessCase | Latency, progress: Progress) -> None:
    if isinstance(measured, RobustnessCase):
        results.robustness.append(measured)
        verdict = "ok" if measured.ok else "FAILED: " + "; ".join(measured.problems)
        progress(f"  robustness {measured.fault.value} #{measured.index}: {measured.faulted} faulted of "
                 f"{measured.trials}, {verdict}")  # fmt: skip
        return
    if isinstance(measured, Latency):
        results.latency = measured
        progress(f"  latency: {measured}")
        return
    record = measured.model_copy(update={"part": part.value})
    results.runs.append(record)
    best = min((v for v in record.values if v is not None), default=None)
    progress(f"  {part.value} {record.arm.value} {record.task} seed {record.seed} slots {record.slots} "
             f"pruner {record.pruner}: {len(record.trials)} trials, best {best}, {record.wall_s:.1f} s")  # fmt: skip


def _quality(env: EvalEnv, suite: Suite, llm: str, scratch: Path) -> Iterator[Unit]:
    for name in suite.functions:
        for seed in range(suite.quality_seeds):
            for arm in (Arm.random, Arm.plain_tpe):
                yield (record_key("quality", arm, name, seed),
                       partial(in_process, synthetic(name), arm, seed, suite.quality_trials))  # fmt: skip


def _stack(env: EvalEnv, suite: Suite, llm: str, scratch: Path) -> Iterator[Unit]:
    for name in suite.functions:
        task = synthetic(name)
        for seed in range(suite.stack_seeds):
            yield record_key("stack", Arm.plain_tpe, name, seed), partial(in_process, task, Arm.plain_tpe, seed,
                                                                          suite.stack_trials)  # fmt: skip
            for slots in suite.stack_slots:
                yield (record_key("stack", Arm.stack_optuna, name, seed, slots),
                       partial(run_stack, env, task, Arm.stack_optuna, seed, suite.stack_trials, slots))  # fmt: skip
                if slots > 1:
                    yield (record_key("stack", Arm.plain_tpe_jobs, name, seed, slots),
                           partial(plain_jobs, task, seed, suite.stack_trials, slots))  # fmt: skip


def _llm(env: EvalEnv, suite: Suite, llm: str, scratch: Path) -> Iterator[Unit]:
    for name in suite.functions:
        for seed in range(suite.llm_seeds):
            yield (record_key("llm", Arm.stack_llm, name, seed, suite.llm_slots),
                   partial(run_stack, env, synthetic(name), Arm.stack_llm, seed, suite.llm_trials, suite.llm_slots,
                           llm=llm))  # fmt: skip


def _wallclock(env: EvalEnv, suite: Suite, llm: str, scratch: Path) -> Iterator[Unit]:
    for name, target in suite.wallclock_targets.items():
        task = synthetic(name, steps=5, step_seconds=suite.wallclock_step_s)
        for seed in range(suite.wallclock_seeds):
            for slots in (1, 4):
                yield (record_key("wallclock", Arm.stack_optuna, name, seed, slots, target_regret=target),
                       partial(run_stack, env, task, Arm.stack_optuna, seed, suite.wallclock_max_trials, slots,
                               target_regret=target))  # fmt: skip
                yield (record_key("wallclock", Arm.plain_tpe_jobs, name, seed, slots, target_regret=target),
                       partial(plain_jobs, task, seed, suite.wallclock_max_trials, slots, target_regret=target))  # fmt: skip


def _pruning(env: EvalEnv, suite: Suite, llm: str, scratch: Path) -> Iterator[Unit]:
    for deceptive in (False, True):
        task = synthetic("branin", deceptive=deceptive, steps=10, step_seconds=0.05)
        for seed in range(suite.pruning_seeds):
            for pruner in ("none", "median"):
                yield (record_key("pruning", Arm.stack_optuna, task.name, seed, 4, pruner),
                       partial(run_stack, env, task, Arm.stack_optuna, seed, suite.pruning_trials, 4, pruner=pruner))  # fmt: skip


def _robustness(env: EvalEnv, suite: Suite, llm: str, scratch: Path) -> Iterator[Unit]:
    for fault in FaultKind:
        for index in range(suite.robustness_campaigns):
            yield f"robustness/{fault.value}/{index}", partial(run_case, env, fault, index, suite.robustness_trials)


def _latency(env: EvalEnv, suite: Suite, llm: str, scratch: Path) -> Iterator[Unit]:
    yield "latency", partial(measure, env, suite.latency_launches, suite.latency_rounds, scratch / "latency",
                             peers=suite.latency_peers, peer_trials=suite.latency_peer_trials)  # fmt: skip


def _digits(env: EvalEnv, suite: Suite, llm: str, scratch: Path) -> Iterator[Unit]:
    task = digits(epochs=suite.digits_epochs)
    for seed in range(suite.digits_seeds):
        yield (record_key("digits", Arm.stack_optuna, task.name, seed, 4),
               partial(run_stack, env, task, Arm.stack_optuna, seed, suite.digits_trials, 4))  # fmt: skip
        yield (record_key("digits", Arm.plain_tpe_jobs, task.name, seed, 4),
               partial(plain_jobs, task, seed, suite.digits_trials, 4))


_PARTS: dict[Part, Callable[[EvalEnv, Suite, str, Path], Iterator[Unit]]] = {
    Part.quality: _quality,
    Part.stack: _stack,
    Part.llm: _llm,
    Part.wallclock: _wallclock,
    Part.pruning: _pruning,
    Part.robustness: _robustness,
    Part.latency: _latency,
    Part.digits: _digits,
}
