"""What a job asks for: the `JobSpec` record, and `JobRequest`, the settings a submitter chooses (declared once)."""

from __future__ import annotations

import enum
import math
import re
from pathlib import Path
from typing import Annotated, Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator, model_validator

from compute.container import ContainerRuntime, validate_image, validate_user
from compute.priority import Priority, parse_priority
from compute.data import validate_data
from compute.project_defaults import DEFAULT_PROJECT


PROJECT_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
"""A project name: letters, digits, `_`, `.`, `-` (at most 64, starting with a letter or digit)."""

MAX_LABELS = 64
"""Labels per job (a campaign sets 3); more is refused."""
MAX_LABEL_KEY = 128
"""Characters in a label's key."""
MAX_LABEL_VALUE = 1024
"""Characters in a label's value."""

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def refuse_nul(value: str, what: str) -> str:
    """`value`, or ValueError when it holds a NUL byte (which exec would silently cut it at)."""
    if "\x00" in value:
        raise ValueError(f"{what} {value!r} contains a NUL byte; remove it (a command line cannot carry one)")
    return value


class Launcher(str, enum.Enum):
    """How each member of a job runs its argv."""

    none = "none"
    """The argv runs as is (it reads AR_NODE_RANK, MASTER_ADDR ... itself)."""
    torchrun = "torchrun"
    """Each member runs `torchrun --nnodes N --node-rank R --nproc-per-node G --master-addr A
    --master-port P -- <argv>` (compute/gang_env.py)."""


_PRIORITY_SCHEMA = {
    "anyOf": [
        {"type": "integer", "minimum": 0, "maximum": 100},
        {"enum": [p.name for p in Priority]},
    ],
    "description": "0-100 or a name: idle=0, low=25, normal=50, high=75, urgent=90.",
}


class _Fields(BaseModel):
    """Frozen, closed, finite numbers; each field's docstring is its description (in every schema
    derived from it: the campaign config, the skill's tool schema, the CLI's help)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, use_attribute_docstrings=True,
                              defer_build=True)  # built on first use: a command that only names them pays nothing


class _ResourceFields(_Fields):
    """What one attempt of a job occupies on a node: declared once, nested in `JobSpec.resources`
    and flat in `JobRequest`."""

    field_prefix: ClassVar[str] = ""
    """How the fields are named in error messages (`resources.` when nested)."""

    gpus: Annotated[int, Field(ge=0, le=64)] = 0
    """GPU slots per node, all placed on one node (for a multi-node job: on each of its nodes)."""
    nodes: Annotated[int, Field(ge=1, le=1024)] = 1
    """How many distinct nodes the job spans (a gang: one member per node, placed, started,
    stopped and requeued together). More than 1 needs `gpus` >= 1 (see docs/gangs.md)."""
    cpus: Annotated[float, Field(gt=0, le=1024)] = 1.0
    """CPU cores; recorded and passed to backends that enforce them (Ray)."""
    memory_gb: Annotated[float | None, Field(gt=0)] = None
    """Host memory in GiB; recorded and passed to backends that enforce it (Ray)."""

    @model_validator(mode="after")
    def _gang_needs_gpus(self) -> Self:
        if self.nodes > 1 and self.gpus < 1:
            p = self.field_prefix
            raise ValueError(f"{p}nodes={self.nodes} needs {p}gpus >= 1 (GPUs per node); "
                             "a job without GPUs runs on one node: set nodes to 1 or ask for gpus")
        return self


class Resources(_ResourceFields):
    """What one attempt of a job occupies on a node."""

    model_config = ConfigDict(strict=True)
    field_prefix: ClassVar[str] = "resources."


class JobOptions(_Fields):
    """How a job is treated: its launcher, priority, project, retries, limits and container.
    Declared once here; `JobSpec` and `JobRequest` (the campaign's `compute` section, the
    `submit_job` skill, `jobs submit`'s options) take these fields from it."""

    launcher: Launcher = Launcher.none
    """`none`: every member runs argv as is; `torchrun`: argv runs under torchrun, wired to the gang."""
    priority: Annotated[int, Field(ge=0, le=100), WithJsonSchema(_PRIORITY_SCHEMA)] = int(Priority.normal)
    """0-100; names: idle=0, low=25, normal=50, high=75, urgent=90. Higher runs first."""
    preemptible: bool = True
    """May be stopped (SIGTERM, grace, SIGKILL) to make room for higher-priority work.
    A preempted job goes back to pending with its checkpoint dir and spends no retry."""
    project: Annotated[str, Field(pattern=PROJECT_NAME)] = DEFAULT_PROJECT
    """The project (a team's share of the fleet, `compute project set`) whose quota it runs under."""
    borrowed_only: bool = False
    """Always run as borrowed work, never inside the project's guaranteed quota: any project that
    needs its quota back reclaims it first (nightly sweeps set this). Needs `preemptible`."""
    max_retries: Annotated[int, Field(ge=0, le=100)] = 0
    """Retries after user failures (non-zero exit in user code), with exponential
    backoff and jitter. Preemptions and infra faults never spend these."""
    retry_backoff_s: Annotated[float, Field(ge=0, le=3600)] = 1.0
    """Base of the exponential backoff between user-failure retries."""
    time_limit_s: Annotated[float | None, Field(gt=0)] = None
    """Wall-clock limit per attempt; past it the attempt is stopped and ends timed_out."""
    progress_timeout_s: Annotated[float | None, Field(gt=0)] = None
    """Hang detection: an attempt whose log has not grown for this many seconds is stopped as
    hung (SIGTERM, grace, SIGKILL), classified infra (rule `hang`) and requeued on the infra
    budget. Default: none, so a job that is silent for long is never stopped for it."""
    grace_s: Annotated[float | None, Field(ge=0, le=3600)] = None
    """Seconds between SIGTERM and SIGKILL for this job. Default: the host's grace."""
    image: str | None = None
    """Container image. When set, each attempt runs in its own container `ar-<job id>-<attempt>`
    (docker or podman, `--init`) with the cwd and the checkpoint dir mounted at their own paths,
    the datasets read-only at `/data/<name>`, and the GPUs passed only when they are real."""
    container_runtime: str = "docker"
    """`docker` or `podman`: the container CLI used when `image` is set."""

    @field_validator("priority", mode="before")
    @classmethod
    def _named_priority(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("priority must be a name or an integer 0-100, not a boolean")
        if isinstance(value, (int, str)):  # a Priority is an int
            return parse_priority(value if isinstance(value, str) else int(value))
        return value

    @field_validator("launcher", mode="before")
    @classmethod
    def _launcher(cls, value: Any) -> Any:
        if isinstance(value, str) and not isinstance(value, Launcher):
            if value not in Launcher.__members__:
                raise ValueError(f"launcher must be 'none' or 'torchrun', not {value!r}")
            return Launcher(value)
        return value

    @field_validator("progress_timeout_s", mode="before")
    @classmethod
    def _progress_timeout(cls, value: Any) -> Any:
        if value is None:
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise ValueError("progress_timeout_s must be a positive number of seconds (e.g. 600); leave it unset "
                             "for no hang detection")
        return float(value)

    @field_validator("container_runtime")
    @classmethod
    def _runtime(cls, value: str) -> str:
        if value not in ContainerRuntime.__members__:
            raise ValueError(f"container_runtime must be 'docker' or 'podman', not {value!r}")
        return value

    @field_validator("image")
    @classmethod
    def _image(cls, value: str | None) -> str | None:
        return value if value is None else validate_image(value)

    @model_validator(mode="after")
    def _borrowed_needs_preemptible(self) -> Self:
        if self.borrowed_only and not self.preemptible:
            raise ValueError("borrowed_only needs preemptible: borrowed work is stopped when its lender needs "
                             "the GPUs back; drop borrowed_only or make the job preemptible")
        return self


class JobRequest(JobOptions, _ResourceFields):
    """What a submitter chooses about how its jobs run, flat: the `Resources` fields and the
    `JobOptions`. The campaign's `compute` section, the `submit_job` skill's input and the options
    of `jobs submit` are this model (tests/test_architecture.py checks every `JobSpec` field is
    reachable from each, or listed there as set by the caller itself)."""

    def spec_fields(self) -> dict[str, Any]:
        """These settings as `JobSpec` keyword arguments (the resources nested)."""
        resources = {name: getattr(self, name) for name in Resources.model_fields}
        options = {name: getattr(self, name) for name in JobOptions.model_fields}
        return {"resources": Resources(**resources), **options}


class JobSpec(JobOptions):
    """One unit of compute: a command, its environment, what it needs and how it is treated.

    Frozen: a submitted spec never changes; the store keeps it as JSON.
    """

    model_config = ConfigDict(strict=True)

    name: Annotated[str, Field(min_length=1, max_length=200)] = "job"
    """A human-readable name; need not be unique."""
    argv: list[str] | str
    """The command as a list of strings (run without a shell). A single string is
    allowed only with `shell=True`, and then runs through `sh -c`."""
    shell: bool = False
    """Run `argv` (a string) through `sh -c`. Off by default: quoting bugs hide there."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment variables, added to the allowlisted part of the daemon's environment
    (see `compute.jobenv`). Stored and shown as given: put no credentials here, use `secret_env`."""
    secret_env: list[str] = Field(default_factory=list)
    """Names of credentials the job needs (`HF_TOKEN`, `WANDB_API_KEY` ...), read from the daemon's
    environment when an attempt starts. Only the names are stored; the values never reach the
    store, `jobs show`, MLflow or a container's command line, and `read_logs` redacts them."""
    cwd: str | None = None
    """Working directory (absolute). Default: the directory the job was submitted from."""
    resources: Resources = Field(default_factory=Resources)
    """Nodes, GPUs per node, CPUs and memory one attempt occupies."""
    avoid_nodes: list[str] = Field(default_factory=list)
    """Nodes the job should not run on (a campaign re-running a suspect result elsewhere): the
    scheduler places it on other nodes, and here only when no other node could ever host it."""
    labels: dict[str, str] = Field(default_factory=dict)
    """Free-form key/value labels (campaign, trial, owner ...); filterable in list_jobs."""
    idempotency_key: Annotated[str | None, Field(min_length=1, max_length=500)] = None
    """Submitting again with the same key returns the existing job instead of a new one."""
    checkpoint_dir: str | None = None
    """AR_CHECKPOINT_DIR for every attempt (absolute path). Default: a fresh directory per
    job under the compute home. Set it to hand a job the checkpoint of an earlier one (a
    stopped run continued by a new job); the caller owns that directory and its lifetime."""
    user: str | None = None
    """Who the container runs as (`UID:GID`). Client.submit fills in the submitting user's."""
    data: dict[str, str] = Field(default_factory=dict)
    """Datasets: name -> absolute path (a file or a folder; a FUSE mount of a bucket works too).
    Each is `AR_DATA_<NAME>` in the job's environment and, in a container, mounted read-only at
    `/data/<name>` (AR_DATA_<NAME> then names that path). Client.submit checks they exist."""

    @field_validator("env", "labels")
    @classmethod
    def _keys_not_empty(cls, value: dict[str, str]) -> dict[str, str]:
        for key, item in value.items():
            if not key or "=" in key:
                raise ValueError(f"key {key!r} must be non-empty and contain no '='")
            if key.startswith("-"):
                raise ValueError(f"key {key!r} must not start with '-' (it would read as an option)")
            if _CONTROL.search(key):
                raise ValueError(f"key {key!r} contains a control character (newline, tab, NUL ...); remove it")
            refuse_nul(item, f"the value of {key!r}")
        return value

    @field_validator("labels")
    @classmethod
    def _labels_bounded(cls, labels: dict[str, str]) -> dict[str, str]:
        if len(labels) > MAX_LABELS:
            raise ValueError(f"{len(labels)} labels, over the limit of {MAX_LABELS}; keep the few you filter on "
                             "(campaign, owner ...) and put the rest in the job's name or its files")
        for key, value in labels.items():
            if len(key) > MAX_LABEL_KEY:
                raise ValueError(f"label key {key[:40]!r}... is {len(key)} characters, over the limit of {MAX_LABEL_KEY}")
            if len(value) > MAX_LABEL_VALUE:
                raise ValueError(f"the value of label {key!r} is {len(value)} characters, over the limit of "
                                 f"{MAX_LABEL_VALUE}; shorten it")
        return labels

    @field_validator("secret_env")
    @classmethod
    def _secret_names(cls, names: list[str]) -> list[str]:
        for name in names:
            if not _ENV_NAME.fullmatch(name):
                raise ValueError(f"secret_env name {name!r} must be a variable name (letters, digits, _)")
        return names

    @field_validator("argv")
    @classmethod
    def _no_nul_in_argv(cls, value: list[str] | str) -> list[str] | str:
        for i, item in enumerate([value] if isinstance(value, str) else value):
            refuse_nul(item, "argv" if isinstance(value, str) else f"argv[{i}]")
        return value

    @field_validator("name", "cwd", "checkpoint_dir", "idempotency_key")
    @classmethod
    def _no_nul(cls, value: str | None, info: Any) -> str | None:
        return value if value is None else refuse_nul(value, info.field_name)

    @field_validator("cwd")
    @classmethod
    def _absolute_cwd(cls, value: str | None) -> str | None:
        if value is not None and not Path(value).is_absolute():
            raise ValueError(f"cwd {value!r} must be an absolute path (Client.submit resolves relative ones)")
        return value

    @field_validator("checkpoint_dir")
    @classmethod
    def _absolute_checkpoint_dir(cls, value: str | None) -> str | None:
        if value is not None and not Path(value).is_absolute():
            raise ValueError(f"checkpoint_dir {value!r} must be an absolute path; leave it unset for a fresh "
                             "directory per job")
        return value

    @field_validator("user")
    @classmethod
    def _user(cls, value: str | None) -> str | None:
        return value if value is None else validate_user(value)

    @field_validator("data")
    @classmethod
    def _data(cls, value: dict[str, str]) -> dict[str, str]:
        return validate_data(value)

    @model_validator(mode="after")
    def _gang_without_image(self) -> JobSpec:
        if self.resources.nodes > 1 and self.image is not None:
            raise ValueError("a multi-node job (resources.nodes > 1) cannot run in a container image yet; "
                             "drop image, or run it on one node")
        return self

    @model_validator(mode="after")
    def _argv_matches_shell(self) -> JobSpec:
        if isinstance(self.argv, str):
            if not self.shell:
                raise ValueError(
                    "argv is a string but shell is false: pass a list of arguments "
                    '(["python", "train.py"]), or set shell=True to run the string through sh -c'
                )
            if not self.argv.strip():
                raise ValueError("argv is an empty string: give the command to run")
        else:
            if self.shell:
                raise ValueError("shell=True needs argv as one string, not a list")
            if not self.argv:
                raise ValueError('argv is empty: give the command as a list, e.g. ["python", "train.py"]')
            if not self.argv[0]:
                raise ValueError("argv[0] is empty: it must name the program to run")
        return self
