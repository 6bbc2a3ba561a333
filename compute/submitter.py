"""The job's environment is the submitter's, as with sbatch.

A job runs under the daemon, which may have been started from another shell, virtualenv or
user session. So at submit time (the Python `Client`, hence the CLI and MCP too) the spec
records the submitter's `PATH` and `VIRTUAL_ENV`, and a bare `python` / `python3` in argv is
resolved to the interpreter that name means on the submitter's PATH (their activated
virtualenv), falling back to the submitting interpreter. Names the spec sets itself win;
a path in argv[0] is never touched.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping

from compute.spec import JobSpec

SUBMITTER_VARS = ("PATH", "VIRTUAL_ENV")
"""Variables copied from the submitter into the job's spec.env (unless the spec sets them)."""
BARE_PYTHONS = ("python", "python3")


def resolve_python(name: str, path: str | None, executable: str) -> str:
    """What a bare `python` means for the submitter: the first on `path`, else `executable`."""
    found = shutil.which(name, path=path) if path else None
    return os.path.abspath(found) if found else executable


def as_submitted(spec: JobSpec, environ: Mapping[str, str] | None = None, executable: str | None = None) -> JobSpec:
    """`spec` with the submitter's PATH/VIRTUAL_ENV recorded and a bare python resolved."""
    environ = os.environ if environ is None else environ
    env = dict(spec.env)
    for name in SUBMITTER_VARS:
        if name not in env and environ.get(name):
            env[name] = environ[name]
    update: dict[str, object] = {"env": env}
    if isinstance(spec.argv, list) and spec.argv and spec.argv[0] in BARE_PYTHONS and not spec.image:
        python = resolve_python(spec.argv[0], env.get("PATH"), executable or sys.executable)
        update["argv"] = [python, *spec.argv[1:]]
    return spec.model_copy(update=update)
