"""Which releases of another project our code that reaches past its public API was tested with.

A module that writes or reads another project's tables, or replaces one of its private methods,
names the releases it was tested with and asks `tested_release` once, at start: with another
release it takes that project's public API instead (slower, never a row the project would not
write), and says so once in the log.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence


def untested_release(project: str, version: str, tested: Sequence[str], fallback: str) -> str | None:
    """Why `project` `version` (a release not among `tested`, each major.minor) must not be used past
    its public API, saying what is done instead (`fallback`); None for a tested release."""
    if ".".join(version.split(".")[:2]) in tested:
        return None
    return (f"{project} {version} is not a release autoresearch was tested with here ({', '.join(tested)}.x): "
            f"{fallback}. Install {project}=={tested[-1]}.* to get the fast path back")  # fmt: skip


def tested_release(project: str, version: str, tested: Sequence[str], fallback: str, log: str) -> bool:
    """Whether `version` of `project` is among `tested`; a warning on the logger named `log` when it
    is not (logging is imported only then: a short command that reads never pays for it)."""
    problem = untested_release(project, version, tested, fallback)
    if problem:
        import logging

        logging.getLogger(log).warning("%s", problem)
    return problem is None


def installed_version(project: str) -> str:
    """The installed version of `project` (a distribution name), as `importlib.metadata.version`
    gives it: from the name of its `.dist-info` folder on `sys.path`, the first found, without
    importing `importlib.metadata` (tens of milliseconds of a short command's start-up); through it
    where no such folder names a version."""
    wanted = re.sub(r"[-_.]+", "_", project).lower()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.endswith(".dist-info") and "-" in name:
                dist, version = name[: -len(".dist-info")].split("-", 1)
                if re.sub(r"[-_.]+", "_", dist).lower() == wanted and os.path.isfile(os.path.join(entry, name, "METADATA")):
                    return version
    import importlib.metadata

    return importlib.metadata.version(project)
