"""The environment a job starts with: an allowlist of the daemon's variables, never all of them.

A job sees only
- the variables named in `JOB_ENV_NAMES` and those starting with a prefix in `JOB_ENV_PREFIXES`
  (the shell basics, locale, virtualenv/conda, CUDA/NCCL/NVIDIA and thread-count settings),
  plus the names an operator adds with `AUTORESEARCH_JOB_ENV` (comma-separated; `NAME*` for a prefix);
- the credentials its spec names in `JobSpec.secret_env`, read from the daemon's environment at
  launch (their values are never stored in the spec, shown by `jobs show`, or logged to MLflow);
- `JobSpec.env`, and the variables autoresearch sets: `JOB_VARIABLES` below, the one table of
  their names, meanings and setters (docs/environment.md is generated from it). Setters spell a
  name through its constant here (`AR_JOB_ID.name`), never as a string of their own.

So an API key, `HF_TOKEN`, `AWS_SECRET_ACCESS_KEY` ... in the shell that started the daemon
reaches no job unless the job asks for it by name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

JOB_ENV_VAR = "AUTORESEARCH_JOB_ENV"
"""Extra names (comma-separated; a trailing `*` makes a prefix) that jobs may inherit."""
JOB_ENV_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "TMPDIR", "TEMP", "TMP", "LANG", "LANGUAGE",
    "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "PYTHONPATH", "PYTHONHOME", "PYTHONUNBUFFERED",
    "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONWARNINGS", "VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT",
    "PIP_INDEX_URL", "UV_CACHE_DIR", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
    "HF_HOME", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "TORCH_HOME",
    "MPLBACKEND", "MPLCONFIGDIR", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "MLFLOW_TRACKING_URI",
    "AUTORESEARCH_HOME", "RAY_ADDRESS", "RAY_AUTH_MODE",
})  # fmt: skip
"""Variables a job inherits from the daemon by name."""
JOB_ENV_PREFIXES = ("LC_", "CONDA_", "CUDA_", "NCCL_", "NVIDIA_", "CUDNN_", "TORCH_CUDA_", "PYTORCH_", "TRITON_")
"""Variables a job inherits from the daemon by prefix."""


@dataclass(frozen=True)
class JobVariable:
    """One variable autoresearch puts in a job's environment."""

    name: str
    """The variable's name; a name ending in `_` is a prefix (`AR_DATA_` + the dataset's name)."""
    meaning: str
    """What the job reads in it."""
    set_by: str
    """The module (and function) that sets it, and for which jobs."""


JOB_VARIABLES: list[JobVariable] = []
"""Every variable autoresearch sets for a job, in the order a reader meets them (docs/environment.md)."""


def _variable(name: str, meaning: str, set_by: str) -> JobVariable:
    variable = JobVariable(name, meaning, set_by)
    JOB_VARIABLES.append(variable)
    return variable


_ATTEMPT = "compute/attempt_command.py `attempt_env`: every attempt"
CUDA_VISIBLE_DEVICES = _variable(
    "CUDA_VISIBLE_DEVICES", "The GPU indices the scheduler gave this attempt on its node (comma-separated; "
    "virtual slots when the node has no GPUs)", _ATTEMPT)
AR_JOB_ID = _variable("AR_JOB_ID", "The job's id (also marks the attempt's processes)", _ATTEMPT)
AR_ATTEMPT = _variable("AR_ATTEMPT", "The attempt's number, from 1 (a requeued job runs again as the next)", _ATTEMPT)
AR_CHECKPOINT_DIR = _variable(
    "AR_CHECKPOINT_DIR", "Where to checkpoint: one folder per job (or `JobSpec.checkpoint_dir`), kept across "
    "attempts, so a preempted job resumes from it", _ATTEMPT)
AR_NODE = _variable(
    "AR_NODE", "The name of the node the attempt (or a health probe's command) runs on",
    f"{_ATTEMPT} placed on a named node; compute/health/command.py: a health probe's command")
AR_NODE_VIRTUAL = _variable(
    "AR_NODE_VIRTUAL", "`1` when the node's GPUs are virtual slots (no nvidia-smi), else `0`",
    "compute/health/command.py: a health probe's command (not a job)")
AR_DATA_ = _variable(
    "AR_DATA_", "The path of dataset NAME (its name upper-cased), read-only; `/data/<name>` in a container",
    "compute/data.py `data_env`: jobs with `data`")
_GANG = "compute/gang_env.py `gang_env`: every member of a multi-node job (a gang)"
AR_NNODES = _variable("AR_NNODES", "How many nodes the gang spans", _GANG)
AR_NODE_RANK = _variable("AR_NODE_RANK", "This member's rank, 0 to AR_NNODES-1; rank 0 hosts MASTER_ADDR", _GANG)
AR_GPUS_PER_NODE = _variable("AR_GPUS_PER_NODE", "GPUs of each member", _GANG)
MASTER_ADDR = _variable("MASTER_ADDR", "The address of rank 0's node, for the job's rendezvous", _GANG)
MASTER_PORT = _variable("MASTER_PORT", "A port free on rank 0's node, chosen per attempt", _GANG)
_TORCHRUN = "torchrun itself, for `launcher: torchrun` (compute/gang_env.py `member_argv` wraps the argv)"
RANK = _variable("RANK", "The process's global rank", _TORCHRUN)
LOCAL_RANK = _variable("LOCAL_RANK", "The process's rank on its node", _TORCHRUN)
WORLD_SIZE = _variable("WORLD_SIZE", "How many processes the job runs in all", _TORCHRUN)
_RUN = "tracking/binding.py `run_env`: jobs tied to an MLflow run (a campaign's trials; `submit_job` with `mlflow`)"
MLFLOW_TRACKING_URI = _variable(
    "MLFLOW_TRACKING_URI", "The MLflow store the run lives in; for a local SQLite store on a Ray cluster, the "
    "`http://` address of the `mlflow server` serving it (docs/ray.md)", _RUN)
MLFLOW_EXPERIMENT_ID = _variable("MLFLOW_EXPERIMENT_ID", "The run's experiment", _RUN)
MLFLOW_RUN_ID = _variable(
    "MLFLOW_RUN_ID", "The run the job logs into: `mlflow.start_run()` in the script resumes it", _RUN)
_TRIAL = "autoresearch/runner/launch.py `trial_env`: a campaign's trial jobs and their holdout jobs"
AR_CAMPAIGN = _variable("AR_CAMPAIGN", "The campaign's name (`{campaign}` in the command)", _TRIAL)
AR_TRIAL = _variable("AR_TRIAL", "The trial's number (`{trial}`)", _TRIAL)
AR_SEED = _variable("AR_SEED", "The trial's seed (`{seed}`): a confirmation re-runs a trial with a new one", _TRIAL)
AR_TRIAL_DIR = _variable(
    "AR_TRIAL_DIR", "A folder of the trial's own (`{trial_dir}`), made at launch and kept across its attempts",
    _TRIAL)


def _extra(environ: Mapping[str, str]) -> tuple[set[str], tuple[str, ...]]:
    items = [item.strip() for item in environ.get(JOB_ENV_VAR, "").split(",") if item.strip()]
    return {i for i in items if not i.endswith("*")}, tuple(i[:-1] for i in items if i.endswith("*"))


def allowed_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allowlisted part of `environ` (default: this process's): what every job inherits."""
    environ = os.environ if environ is None else environ
    names, prefixes = _extra(environ)
    prefixes = JOB_ENV_PREFIXES + prefixes
    return {k: v for k, v in environ.items() if k in JOB_ENV_NAMES or k in names or k.startswith(prefixes)}


def secret_values(names: Iterable[str], environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The values of the credentials a spec names; KeyError naming the first one `environ` lacks."""
    environ = os.environ if environ is None else environ
    out: dict[str, str] = {}
    for name in names:
        if name not in environ:
            raise KeyError(name)
        out[name] = environ[name]
    return out


def redact_secrets(text: str, names: Iterable[str], environ: Mapping[str, str] | None = None) -> str:
    """`text` with the values of the named credentials (as `environ` holds them) replaced by [REDACTED]."""
    environ = os.environ if environ is None else environ
    values = sorted((environ[n] for n in names if len(environ.get(n, "")) >= 4), key=len, reverse=True)
    for value in values:
        text = text.replace(value, "[REDACTED]")
    return text
