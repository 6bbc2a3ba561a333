"""`config check` renders the command against the search space: every placeholder with each
parameter's extreme values (float low/high/middle, int low/high, every choice), so a format
spec that cannot render (`{x1:d}` on a float, a width of a billion) is refused when the config
is read, not when the first trial launches. `missing_program` warns when the program the jobs
would start is not there (a typo such as `pythn` would fail every trial the same way)."""

from __future__ import annotations

import os
import re
import shutil
import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from autoresearch.campaign.params import CategoricalParam, FloatParam, IntParam

MAX_FORMAT_NUMBER = 999
"""The largest width or precision a placeholder's format spec may ask for (`{x:.999f}`)."""

MAX_RENDERED_CHARS = 100_000
"""The longest one command item may render to."""

_NUMBER = re.compile(r"\d+")


def samples(param: FloatParam | IntParam | CategoricalParam) -> list[Any]:
    """The values of `param` a command is rendered with: its extremes (and middle), or every choice."""
    if isinstance(param, CategoricalParam):
        return list(param.choices)
    if isinstance(param, IntParam):
        return [param.low, param.high]
    return [param.low, param.high, param.low / 2 + param.high / 2]


def spec_problem(item: str) -> str | None:
    """What is wrong with the format specs of one command item (before rendering), or None."""
    for _, field, spec, _ in string.Formatter().parse(item):
        if field is None or not spec:
            continue
        if "{" in spec:
            return f"the format spec of {{{field}}} contains a placeholder ({spec!r}); give a literal spec like :.3f"
        for number in _NUMBER.findall(spec):
            if int(number) > MAX_FORMAT_NUMBER:
                return f"the format spec of {{{field}}} asks for {number} characters or digits (at most {MAX_FORMAT_NUMBER})"
    return None


def render_problem(item: str, space: Mapping[str, FloatParam | IntParam | CategoricalParam],
                   builtins: Mapping[str, Any]) -> str | None:
    """Why `item` cannot render for some value of the search space, or None (placeholders must
    already be known names)."""
    problem = spec_problem(item)
    if problem:
        return problem
    values: dict[str, Sequence[Any]] = {name: samples(param) for name, param in space.items()}
    rounds = max((len(v) for v in values.values()), default=1)
    for k in range(rounds):
        params = {name: options[k % len(options)] for name, options in values.items()}
        try:
            text = item.format_map({**params, **builtins})
        except (ValueError, TypeError, OverflowError, MemoryError) as exc:
            shown = ", ".join(f"{name}={value!r}" for name, value in params.items() if "{" + name in item)
            return f"cannot render with {shown or 'the built-ins'}: {exc}"
        if len(text) > MAX_RENDERED_CHARS:
            return f"renders to {len(text)} characters (at most {MAX_RENDERED_CHARS})"
    return None


def missing_program(command: Sequence[str], cwd: Path, env: Mapping[str, str], image: str | None) -> str | None:
    """Why the job could not start `command[0]` as it will see it, or None: a name with a `/` is
    looked up from `cwd`, a bare name on PATH (the campaign's `env: PATH`, else this shell's,
    which the daemon it starts inherits; relative entries from `cwd`). Not checked inside a
    container `image` (its PATH is the image's) or when argv[0] has a placeholder."""
    program = command[0]
    if image is not None or "{" in program:
        return None
    if "/" in program:
        target = cwd / program
        if target.is_file() and os.access(target, os.X_OK):
            return None
        what = "is not executable (chmod +x it, or run it with its interpreter)" if target.is_file() else "does not exist"
        return f"command[0] {program!r} {what} (looked up from cwd {cwd})"
    path = env.get("PATH", os.environ.get("PATH", os.defpath))
    folders = [cwd / (folder or ".") for folder in path.split(os.pathsep)]
    if shutil.which(program, path=os.pathsep.join(map(str, folders))):
        return None
    hint = f"; it is in cwd: write ./{program}" if (cwd / program).is_file() else ""
    return f"command not found: {program!r} is not on the jobs' PATH{hint}; check the spelling of command[0], or give its path"
