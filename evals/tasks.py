"""The eval tasks, all offline: Branin and Hartmann6 as subprocess jobs with noisy learning
curves (examples/synthetic/job.py, optionally deceptive), and the digits MLP (real training,
examples/digits/train.py).

A task knows how to become a campaign for the full stack, the argv a plain loop runs, and (for
the synthetic functions) the function itself for in-process baselines. Values are always
"lower is better": digits reports validation error = 1 - val_accuracy, with minimum 0.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autoresearch.campaign import Campaign
from evals.metrics import best_so_far
from evals.records import RunRecord
from examples.synthetic.functions import FUNCTIONS, Function

REPO = Path(__file__).resolve().parent.parent
SYNTHETIC = REPO / "examples" / "synthetic"
DIGITS = REPO / "examples" / "digits"


@dataclass(frozen=True)
class Task:
    """One optimisation problem the arms are compared on."""

    name: str
    """branin, hartmann6, branin-deceptive, hartmann6-deceptive or digits."""
    command: tuple[str, ...]
    """The job's argv with `{param}` placeholders (campaign command syntax)."""
    cwd: Path
    search_space: Mapping[str, Mapping[str, Any]]
    """Parameter -> spec, as in campaign.yaml."""
    metric: str
    mode: str
    """min or max: how the job's metric is judged."""
    minimum: float
    """The best reachable value of the lower-is-better objective (regret is measured from it)."""
    step_seconds: float = 0.0
    """Seconds one training step sleeps (0: unknown, e.g. real training)."""
    function: Function | None = None
    """The synthetic function, for in-process baselines (None for digits)."""
    extra: tuple[str, ...] = field(default=())
    """Arguments appended to the command (fault flags, --seed ...)."""

    def to_min(self, value: float) -> float:
        """The job's metric value as the lower-is-better objective."""
        return 1.0 - value if self.name == "digits" else value

    def parse_output(self, text: str) -> tuple[int, float | None]:
        """(training steps reported, the last value of the metric as lower-is-better) from a job's output."""
        steps, value = 0, None
        for line in text.splitlines():
            key, _, rest = line.partition(":")
            if key.strip() in ("step", "epoch"):
                steps += 1
            elif key.strip() == self.metric:
                try:
                    value = self.to_min(float(rest))
                except ValueError:
                    pass
        return steps, value

    def with_extra(self, *args: str) -> Task:
        """The same task with more job arguments (fault flags)."""
        return Task(**{**self.__dict__, "extra": (*self.extra, *args)})

    def campaign(self, **settings: Any) -> Campaign:
        """The task as a campaign (see `campaign_data` for the settings)."""
        return Campaign.model_validate(self.campaign_data(**settings), context={"base_dir": self.cwd})

    def campaign_data(
        self,
        *,
        seed: int,
        trials: int,
        slots: int,
        tracking_uri: str,
        policy: Mapping[str, Any],
        target_regret: float | None = None,
        time_limit_s: float | None = None,
        name: str | None = None,
    ) -> dict[str, Any]:
        """The task as the data of a campaign.yaml: `trials` trials, `slots` at a time, one GPU slot each."""
        objective: dict[str, Any] = {"metric": self.metric, "mode": self.mode, "source": "log"}
        if target_regret is not None:
            if self.mode != "min":
                raise ValueError(f"task {self.name}: a regret target needs a min-mode task")
            objective["target"] = self.minimum + target_regret
        compute: dict[str, Any] = {"gpus": 1}
        if time_limit_s is not None:
            compute["time_limit_s"] = time_limit_s
        return {
            "name": name or f"eval-{self.name}-{seed}-{uuid.uuid4().hex[:8]}",
            "command": [*self.command, *self.extra],
            "cwd": str(self.cwd),
            "objective": objective,
            "search_space": {k: dict(v) for k, v in self.search_space.items()},
            "budget": {"max_trials": trials, "max_parallel": slots},
            "compute": compute,
            "policy": {"seed": seed, **policy},
            "tracking": {"uri": tracking_uri},
        }

    def argv(self, params: Mapping[str, Any], trial_number: int, seed: int) -> list[str]:
        """The job argv a plain loop runs for `params` (same rendering as a campaign)."""
        values = {**params, "trial": trial_number, "seed": seed + trial_number, "campaign": "plain"}
        return [item.format_map(values) for item in (*self.command, *self.extra)]


def synthetic(function: str, *, deceptive: bool = False, steps: int = 5, step_seconds: float = 0.0) -> Task:
    """Branin or Hartmann6 on examples/synthetic/job.py: `steps` steps of `step_seconds` each."""
    fn = FUNCTIONS[function]
    coords = [f"x{i + 1}" for i in range(len(fn.bounds))]
    command = ["python", "job.py", "--function", function]
    for name in coords:
        command += [f"--{name}", f"{{{name}}}"]
    command += ["--steps", str(steps), "--step-seconds", str(step_seconds), "--seed", "{seed}", "--no-mlflow"]
    if deceptive:
        command.append("--deceptive")
    space = {name: {"type": "float", "low": low, "high": high} for name, (low, high) in zip(coords, fn.bounds)}
    return Task(
        name=f"{function}-deceptive" if deceptive else function, command=tuple(command), cwd=SYNTHETIC,
        search_space=space, metric="objective", mode="min", minimum=fn.minimum, step_seconds=step_seconds, function=fn,
    )  # fmt: skip


def digits(*, epochs: int = 10) -> Task:
    """The digits MLP (examples/digits/train.py), `epochs` epochs; objective 1 - val_accuracy.
    `--no-mlflow` in both arms: the stack reads the printed metrics, so the job does the same
    work whoever runs it (importing mlflow in each job costs ~1.5 s here)."""
    command = ["python", "train.py", "--lr", "{lr}", "--hidden", "{hidden}", "--activation", "{activation}",
               "--epochs", str(epochs), "--seed", "{seed}", "--no-mlflow"]  # fmt: skip
    space: dict[str, dict[str, Any]] = {
        "lr": {"type": "float", "low": 1e-4, "high": 1e-1, "log": True},
        "hidden": {"type": "int", "low": 16, "high": 256},
        "activation": {"type": "categorical", "choices": ["relu", "tanh"]},
    }
    return Task(name="digits", command=tuple(command), cwd=DIGITS, search_space=space, metric="val_accuracy",
                mode="max", minimum=0.0)  # fmt: skip


def suggest(trial: Any, space: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Draw a trial's parameters with plain Optuna calls, in the order of the space."""
    params: dict[str, Any] = {}
    for name, spec in space.items():
        if spec["type"] == "float":
            params[name] = trial.suggest_float(name, spec["low"], spec["high"], log=spec.get("log", False))
        elif spec["type"] == "int":
            params[name] = trial.suggest_int(name, spec["low"], spec["high"], log=spec.get("log", False))
        else:
            params[name] = trial.suggest_categorical(name, list(spec["choices"]))
    return params


def minimum(task: str) -> float:
    """The known minimum of a task's lower-is-better objective (digits: 0 validation error)."""
    return _MINIMA.get(task.removesuffix("-deceptive"), 0.0)


def curve(run: RunRecord) -> list[float]:
    """A run's best-so-far simple regret after each trial, against its task's known minimum."""
    return best_so_far(run.values, minimum(run.task))


_MINIMA = {"branin": FUNCTIONS["branin"].minimum, "hartmann6": FUNCTIONS["hartmann6"].minimum}
