"""The environment a job starts with: an allowlist of the daemon's variables, never all of them.

A job sees only
- the variables named in `JOB_ENV_NAMES` and those starting with a prefix in `JOB_ENV_PREFIXES`
  (the shell basics, locale, virtualenv/conda, CUDA/NCCL/NVIDIA and thread-count settings),
  plus the names an operator adds with `AUTORESEARCH_JOB_ENV` (comma-separated; `NAME*` for a prefix);
- the credentials its spec names in `JobSpec.secret_env`, read from the daemon's environment at
  launch (their values are never stored in the spec, shown by `jobs show`, or logged to MLflow);
- `JobSpec.env`, and the variables the daemon sets (CUDA_VISIBLE_DEVICES, AR_*).

So an API key, `HF_TOKEN`, `AWS_SECRET_ACCESS_KEY` ... in the shell that started the daemon
reaches no job unless the job asks for it by name.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

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
