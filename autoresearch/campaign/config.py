"""The campaign config: strict, frozen pydantic models read from `campaign.yaml`.

Cross-field checks raise `located(...)` errors, which carry the path of the offending key
(relative to the model) so the loader can point at its line.
"""

from __future__ import annotations

import enum
import re
import string
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from compute.spec import JobRequest
from compute.suggest import suggest_names
from tracking import MetricRules, MetricSource, resolve_tracking

from autoresearch.campaign._base import Section, paths_checked, resolve_path
from autoresearch.campaign.aggregate import AggregateText
from autoresearch.campaign.command_check import missing_program, render_problem
from autoresearch.campaign.confirm_settings import ConfirmSettings, no_noise_seeds
from autoresearch.campaign.datasets import Dataset
from autoresearch.campaign.holdout_settings import HOLDOUT_PLACEHOLDERS, Holdout, unfixed_file
from autoresearch.campaign.metrics_settings import Metrics, uncapturable
from autoresearch.campaign.paths import CAMPAIGN_NAME
from autoresearch.campaign.params import CategoricalParam, FloatParam, IntParam, located
from autoresearch.campaign.policy_settings import PolicySettings
from autoresearch.campaign.validity import Validity
from autoresearch.campaign.views import direction_of

BUILTIN_PLACEHOLDERS: dict[str, str] = {
    "trial": "the trial number (0, 1, 2 ...)",
    "seed": "the trial's seed: policy.seed (0 when unset) plus the trial number",
    "campaign": "the campaign name",
    "trial_dir": "a folder of the trial's own (also $AR_TRIAL_DIR), made at launch and kept across its attempts",
}
"""Placeholders a command may use besides the search-space parameters."""

class Mode(str, enum.Enum):
    """Whether a larger or a smaller objective value is better."""

    max = "max"
    min = "min"


class Objective(Section):
    """What a trial is judged by."""

    metric: Annotated[str, Field(min_length=1)]
    """Name of the metric (e.g. `val_accuracy`), as logged to MLflow or printed in the log."""
    mode: Mode
    """`max` when larger is better, `min` when smaller is better."""
    target: float | None = None
    """Stop the campaign once a completed trial reaches this value."""
    source: MetricSource = MetricSource.auto
    """Where to read the metric: `mlflow`, `log`, or `auto` (MLflow when logged, else the log)."""
    aggregate: AggregateText = "last"
    """A trial's value from its reported points: `last`, `best` (by mode), or `mean_last:K` (docs/results.md)."""
    holdout: Holdout | None = None
    """A hidden holdout (docs/results.md): an evaluation run for the leaders that the policy never sees."""

    @property
    def direction(self) -> Literal["maximize", "minimize"]:
        """Optuna's name for the mode: `maximize` or `minimize`."""
        return direction_of(self.mode.value)

    def better(self, a: float | None, b: float | None) -> bool:
        """Whether value `a` is strictly better than value `b` (no value is never better, and any value beats none)."""
        if a is None or b is None:
            return a is not None
        return a > b if self.mode is Mode.max else a < b

    def reached(self, value: float | None) -> bool:
        """Whether `value` meets the target (False when there is no target or no value)."""
        if self.target is None or value is None:
            return False
        return value >= self.target if self.mode is Mode.max else value <= self.target


ParamSpec = Annotated[FloatParam | IntParam | CategoricalParam, Field(discriminator="type")]


class Budget(Section):
    """When the campaign stops proposing trials. The first limit reached ends it."""

    max_trials: Annotated[int, Field(ge=1, le=100_000)]
    """Trials in all (cancelled ones do not count)."""
    max_parallel: Annotated[int, Field(ge=1, le=1024)] = 1
    """Trials running at the same time."""
    max_gpu_hours: Annotated[float | None, Field(gt=0)] = None
    """GPU hours summed over finished trials."""
    deadline: datetime | time | None = None
    """An ISO datetime (`2026-12-01T06:00`), or a time of day `HH:MM` (the next one after
    the campaign started). Naive times are local time."""
    max_llm_usd: Annotated[float | None, Field(ge=0)] = None
    """Dollars the LLM policy may spend on model calls."""
    max_consecutive_failures: Annotated[int, Field(ge=0, le=10_000)] = 3
    """When this many trials fail the same way (same failure class and first error line) before
    any completes, the setup is broken: the campaign fails at once. 0: never."""

    @field_validator("deadline", mode="before")
    @classmethod
    def _parse_deadline(cls, value: Any) -> Any:
        if value is None or isinstance(value, (datetime, time)):
            return value
        if isinstance(value, str):
            text = value.strip()
            if re.fullmatch(r"\d{1,2}:\d{2}(:\d{2})?", text):
                try:
                    return time.fromisoformat(text if text.index(":") == 2 else "0" + text)
                except ValueError:
                    pass
            else:
                try:
                    return datetime.fromisoformat(text)
                except ValueError:
                    pass
        hint = " (a date alone is ambiguous: add the time)" if isinstance(value, date) else ""
        raise ValueError(
            f"deadline {value!r} is neither an ISO datetime like 2026-12-01T06:00 nor a time of "
            f"day like 06:00{hint}"
        )

    def deadline_at(self, started_at: datetime) -> datetime | None:
        """The deadline as an aware datetime; a time of day is the first one after `started_at`."""
        if self.deadline is None:
            return None
        if isinstance(self.deadline, datetime):
            return self.deadline.astimezone()
        start = started_at.astimezone()
        candidate = datetime.combine(start.date(), self.deadline).astimezone()
        return candidate if candidate > start else candidate + timedelta(days=1)


class ComputeSettings(Section, JobRequest):
    """How each trial's job is run by the compute layer: every setting of `compute.JobRequest`
    (GPUs, nodes, CPUs, memory, launcher, priority, project, retries, limits, container), declared
    there once. What differs from trial to trial (argv, labels, checkpoint dir ...) the runner sets."""

    named_numbers = frozenset({"priority"})


class Tracking(Section):
    """Where trials are recorded in MLflow."""

    uri: str | None = None
    """MLflow tracking URI; default sqlite:///$AUTORESEARCH_HOME/mlflow.db."""
    experiment: Annotated[str | None, Field(min_length=1)] = None
    """MLflow experiment; default: the campaign name."""

    @field_validator("uri")
    @classmethod
    def _known_store(cls, uri: str | None) -> str | None:
        if uri is None or not uri.strip():
            return uri
        try:
            resolve_tracking(uri)
        except ValueError as exc:
            raise located((), str(exc)) from None
        return uri


class CodeSettings(Section):
    """For campaigns that edit code: which files the policy may change."""

    editable: list[str] = Field(default_factory=list)
    """Files or folders (relative to cwd) the policy may patch."""
    fixed: list[str] = Field(default_factory=list)
    """Files or folders it must not touch (the fixed evaluation)."""

    @model_validator(mode="before")
    @classmethod
    def _moved_keys(cls, data: Any) -> Any:
        return no_noise_seeds(data)

    @field_validator("editable", "fixed")
    @classmethod
    def _relative(cls, paths: list[str]) -> list[str]:
        for i, item in enumerate(paths):
            if not item or Path(item).is_absolute() or ".." in Path(item).parts:
                raise located((i,), f"{item!r} must be a path relative to cwd, without '..'")
        return paths


class Approvals(Section):
    """Actions that wait for a person's yes (`/approve` or `/deny` in `autoresearch chat`)."""

    gpu_hours_over: Annotated[float | None, Field(ge=0)] = None
    """Launching trials once the campaign has used this many GPU-hours needs a yes (asked once)."""
    code_patches: bool = False
    """Launching a trial that applies a code patch needs a yes (asked per trial)."""
    priority_raise: bool = False
    """Raising the campaign's priority from chat needs a yes."""


class Campaign(Section):
    """One research goal: what to run, what to search, how to judge it, and the budget."""

    name: Annotated[str, Field(pattern=CAMPAIGN_NAME)]
    """Names the state dir, the Optuna study and the MLflow experiment: letters, digits, `._-`."""
    command: Annotated[list[str], Field(min_length=1)]
    """argv of a trial, with `{param}` placeholders (and `{trial}`, `{seed}`, `{campaign}`)."""
    cwd: Annotated[Path, Field(validate_default=True)] = Path(".")
    """Working directory of the trials, relative to the config file; resolved to absolute."""
    objective: Objective
    search_space: dict[str, ParamSpec] = Field(default_factory=dict)
    """Parameters to search: `{type: float|int, low, high, log?, step?}` or
    `{type: categorical, choices: [...]}`."""
    budget: Budget
    compute: ComputeSettings = Field(default_factory=ComputeSettings)
    policy: PolicySettings = Field(default_factory=PolicySettings)
    tracking: Tracking = Field(default_factory=Tracking)
    metrics: Metrics = Field(default_factory=Metrics)
    code: CodeSettings | None = None
    confirm: ConfirmSettings | None = None
    """Re-run the leaders with new seeds before declaring the winner (off when absent)."""
    approvals: Approvals = Field(default_factory=Approvals)
    validity: Validity = Field(default_factory=Validity)
    """Hardware provenance: when a result is suspect and whether it is re-run elsewhere (docs/results.md)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment variables for every trial (stored in the job spec as given: no credentials)."""
    secret_env: list[str] = Field(default_factory=list)
    """Names of credentials every trial needs (`HF_TOKEN` ...), passed by name from the compute
    daemon's environment (`JobSpec.secret_env`): never stored, shown or logged to MLflow."""
    data: dict[Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,63}$")], Dataset] = Field(default_factory=dict)
    """Datasets every trial reads: `name: {path: ...}`; AR_DATA_<NAME> in the job, /data/<name> in a container."""

    @field_validator("cwd")
    @classmethod
    def _resolve_cwd(cls, value: Path, info: ValidationInfo) -> Path:
        path = resolve_path(value, info, "cwd")
        if paths_checked(info) and not path.is_dir():
            raise ValueError(f"cwd {str(value)!r} is not a directory (resolved to {path})")
        return path

    @field_validator("env", mode="before")
    @classmethod
    def _env_as_strings(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: v if isinstance(v, (str, dict, list)) else _scalar(v) for k, v in value.items()}
        return value

    @field_validator("env", "secret_env")
    @classmethod
    def _variable_names(cls, value: Any) -> Any:
        for i, name in enumerate(value):
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise located((name if isinstance(value, Mapping) else i,), f"{name!r} is not an environment variable name (letters, digits, _; "
                                       "not starting with a digit; no '=')")
        return value

    @field_validator("env", "command")
    @classmethod
    def _no_nul(cls, value: dict[str, str] | list[str]) -> dict[str, str] | list[str]:
        items = value.items() if isinstance(value, Mapping) else enumerate(value)
        for key, item in items:
            if "\x00" in item:
                raise located((key,), f"{item!r} contains a NUL byte; remove it (a command line or an environment "
                                      "cannot carry one)")
        return value

    @field_validator("search_space")
    @classmethod
    def _param_names(cls, space: dict[str, Any]) -> dict[str, Any]:
        for name in space:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise located((name,), f"parameter name {name!r} must be an identifier (letters, digits, _)")
            if name in BUILTIN_PLACEHOLDERS:
                raise located((name,), f"parameter name {name!r} is reserved for the built-in {{{name}}}")
        return space

    @model_validator(mode="after")
    def _cross_checks(self, info: ValidationInfo) -> Campaign:
        for i, item in enumerate(self.command):
            problem = _placeholder_problem(item, set(self.search_space)) or render_problem(
                item, self.search_space,
                {"trial": 0, "seed": self.trial_seed(0), "campaign": self.name, "trial_dir": "/trials/trial-0"},
            )
            if problem:
                raise located(("command", i), f"command[{i}] {item!r}: {problem}")
        missing = uncapturable(self.objective.metric, self.objective.source, self.metrics)
        if missing:
            raise located(missing[0], missing[1])
        self._check_holdout(paths_checked(info))
        if not self.search_space and not (self.code and self.code.editable):
            raise located(("search_space",), "nothing to search: give search_space, or code.editable files")
        if self.code and paths_checked(info):
            for key in ("editable", "fixed"):
                for i, rel in enumerate(getattr(self.code, key)):
                    if not (self.cwd / rel).exists():
                        raise located(("code", key, i), f"{rel!r} not found under cwd {self.cwd}")
        return self

    def _check_holdout(self, check_paths: bool) -> None:
        """objective.holdout: its placeholders render; in a code-edit campaign it names only fixed files."""
        holdout, code = self.objective.holdout, self.code
        builtins = {"trial": 0, "seed": self.trial_seed(0), "campaign": self.name, "trial_dir": "/trials/trial-0",
                    "checkpoint_dir": "/checkpoints/trial-0"}  # fmt: skip
        for i, item in enumerate(holdout.command if holdout else []):
            problem = _placeholder_problem(item, {*self.search_space, *HOLDOUT_PLACEHOLDERS}) or render_problem(
                item, self.search_space, builtins)
            if not problem and check_paths and code and code.editable:
                problem = unfixed_file(item, self.cwd, code.editable, code.fixed)
            if problem:
                raise located(("objective", "holdout", "command", i), f"{item!r}: {problem}")

    @property
    def experiment(self) -> str:
        """The MLflow experiment name: tracking.experiment, else the campaign name."""
        return self.tracking.experiment or self.name

    @property
    def metric_rules(self) -> MetricRules:
        """How trials' logs are read, and which metrics their runs record (objective included)."""
        return self.metrics.rules(self.objective.metric)

    def trial_seed(self, trial_number: int) -> int:
        """The `{seed}` of a trial."""
        return (self.policy.seed or 0) + trial_number

    def missing_program(self) -> str | None:
        """Why the jobs could not start command[0] as they will see it, or None (`command_check`)."""
        return missing_program(self.command, self.cwd, self.env, self.compute.image)

    def render_command(
        self,
        params: Mapping[str, Any],
        trial_number: int,
        *,
        seed_of: int | None = None,
        trial_dir: str | Path | None = None,
    ) -> list[str]:
        """The trial's argv: placeholders replaced by its parameters and the built-ins. `seed_of`:
        the trial whose `{seed}` to use (a trial resuming another keeps that one's seed);
        `trial_dir`: its folder (the launcher's; empty when not given)."""
        seed = self.trial_seed(trial_number if seed_of is None else seed_of)
        folder = "" if trial_dir is None else str(trial_dir)
        values = {**params, "trial": trial_number, "seed": seed, "campaign": self.name, "trial_dir": folder}
        return [item.format_map(values) for item in self.command]


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return "" if value is None else str(value)


def _placeholder_problem(item: str, params: set[str]) -> str | None:
    """What is wrong with the placeholders of one command item, or None."""
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(item) if f is not None]
    except ValueError as exc:
        return f"{exc} (write {{{{ and }}}} for literal braces)"
    known = sorted(params) + sorted(BUILTIN_PLACEHOLDERS)
    for field in fields:
        if not field or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", field):
            return f"placeholder {{{field}}} must name a parameter; known: {', '.join(known)}"
        if field not in params and field not in BUILTIN_PLACEHOLDERS:
            hint = suggest_names(field, known)
            return f"unknown placeholder {{{field}}}{hint}; known: {', '.join(known)}"
    return None


__all__ = [
    "BUILTIN_PLACEHOLDERS",
    "Approvals",
    "Budget",
    "Campaign",
    "CodeSettings",
    "ComputeSettings",
    "MetricSource",
    "Metrics",
    "Mode",
    "Objective",
    "ParamSpec",
    "Tracking",
]
