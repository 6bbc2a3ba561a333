"""The job's environment is the submitter's, as with sbatch.

A job runs under the daemon, which may have been started from another shell, virtualenv or
user session. So at submit time (the Python `Client`, hence the CLI and MCP too) the spec
records the submitter's `PATH` and `VIRTUAL_ENV`, and a bare `python` / `python3` in argv is
resolved to the interpreter that name means on the submitter's PATH (their activated
virtualenv), falling back to the submitting interpreter. Names the spec sets itself win;
a path in argv[0] is never touched.

`Submitter` is who submits, as plain data: the Client resolves a spec with `Submitter.here()`;
the CLI's fast path sends it with its request and the daemon resolves with it
(compute/submissions.py), so both resolve alike. No pydantic is imported here.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from compute.errors import ComputeError

if TYPE_CHECKING:
    from compute.records import Node
    from compute.spec import JobSpec

SUBMITTER_VARS = ("PATH", "VIRTUAL_ENV")
"""Variables copied from the submitter into the job's spec.env (unless the spec sets them)."""
BARE_PYTHONS = ("python", "python3")


class Submitter(NamedTuple):  # not a dataclass: the CLI's fast path must not pay for importing inspect
    """Who submits a job, as far as the job must see it."""

    environ: dict[str, str]
    """The submitter's SUBMITTER_VARS (those set and non-empty)."""
    cwd: str
    """Their working directory: the job's default cwd, and what relative PATH entries mean."""
    executable: str
    """Their interpreter: a bare `python` when none is on their PATH."""
    uid: int
    gid: int

    @classmethod
    def here(cls) -> Submitter:
        """This process as the submitter."""
        environ = {name: os.environ[name] for name in SUBMITTER_VARS if os.environ.get(name)}
        return cls(environ, os.getcwd(), sys.executable, os.getuid(), os.getgid())

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


def resolve_python(name: str, path: str | None, executable: str, cwd: str) -> str:
    """What a bare `python` means for the submitter: the first on `path` (entries relative to
    `cwd`), else `executable`."""
    if path:
        path = os.pathsep.join(os.path.join(cwd, entry) for entry in path.split(os.pathsep))
    found = shutil.which(name, path=path) if path else None
    return os.path.normpath(found) if found else executable


def as_submitted(spec: JobSpec, submitter: Submitter) -> JobSpec:
    """`spec` with the submitter's PATH/VIRTUAL_ENV recorded and a bare python resolved."""
    env = dict(spec.env)
    for name in SUBMITTER_VARS:
        if name not in env and submitter.environ.get(name):
            env[name] = submitter.environ[name]
    update: dict[str, object] = {"env": env}
    if isinstance(spec.argv, list) and spec.argv and spec.argv[0] in BARE_PYTHONS and not spec.image:
        python = resolve_python(spec.argv[0], env.get("PATH"), submitter.executable, submitter.cwd)
        update["argv"] = [python, *spec.argv[1:]]
    return spec.model_copy(update=update)


def resolve_spec(spec: JobSpec, submitter: Submitter, nodes: Sequence[Node], home: Path) -> JobSpec:
    """The spec as it would be queued (what `jobs submit --dry-run` prints): cwd defaults to the
    submitter's, PATH/VIRTUAL_ENV are the submitter's, a bare `python` is the submitter's
    interpreter, a container runs as the submitter. Raises ComputeError for a spec the fleet
    (these `nodes` of `home`) cannot run."""
    from compute.data import check_data_exists  # hashlib, compute.container: not for the CLI's fast path

    spec = as_submitted(spec, submitter)
    if spec.cwd is None:
        spec = spec.model_copy(update={"cwd": submitter.cwd})
    cwd = spec.cwd or submitter.cwd
    if not Path(cwd).is_dir():
        raise ComputeError(f"job {spec.name!r}: cwd {cwd} is not a directory; pass an existing absolute path")
    check_data_exists(spec.data, f"job {spec.name!r}")
    if spec.image is not None and spec.user is None:  # the container runs as whoever submits
        spec = spec.model_copy(update={"user": f"{submitter.uid}:{submitter.gid}"})
    largest = max((len(n.gpus) for n in nodes), default=None)
    if largest is not None and spec.resources.gpus > largest:
        raise ComputeError(
            f"job {spec.name!r} asks for resources.gpus={spec.resources.gpus} on one node, but the largest node "
            f"of {home} has {largest} GPU slots; ask for at most {largest}, or restart the daemon with more "
            "(`autoresearch compute down && autoresearch compute up --gpus N`)"
        )
    wide = spec.resources.nodes
    if nodes and wide > 1 and (fit := sum(len(n.gpus) >= spec.resources.gpus for n in nodes)) < wide:
        raise ComputeError(
            f"job {spec.name!r} asks for resources.nodes={wide} with {spec.resources.gpus} GPU slots each, but "
            f"{home} has only {fit} node(s) with that many slots; ask for at most {fit} nodes, or restart "
            "the daemon with more (`autoresearch compute up --virtual-nodes N --gpus-per-node G`)"
        )
    return spec
