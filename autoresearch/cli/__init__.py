"""The `autoresearch` command line.

`main` (the `autoresearch` script) first offers the command to the fast path
(autoresearch/cli/_fast.py), which answers the hot job commands an agent calls hundreds of times
a night without importing typer or pydantic; everything else, and anything unusual, runs on the
typer app (autoresearch/cli/_app.py: `app`, `COMMANDS`, `load`), which is imported only then.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autoresearch.cli._app import COMMANDS, Entry, LazyGroup, app, load
    from autoresearch.cli._app import _register as _register

_APP_NAMES = ("COMMANDS", "Entry", "LazyGroup", "_register", "app", "load")


def __getattr__(name: str) -> Any:
    if name in _APP_NAMES:
        from autoresearch.cli import _app

        return getattr(_app, name)
    raise AttributeError(f"module 'autoresearch.cli' has no attribute {name!r}")


def main() -> None:
    from autoresearch.cli._fast import run
    from compute.errors import ComputeError

    try:
        code = run(sys.argv[1:])
        if code is None:
            from autoresearch.cli._app import app
            from compute.isolation import seal_process

            seal_process()  # a runner, dashboard, MCP or chat process: jobs may not read its secrets (compute/isolation.py)
            app()
            return
    except ComputeError as err:  # a lost, full or locked store ...: its message says what to do; no traceback
        from autoresearch.cli._plain import write_error

        write_error(str(err))
        code = 1
    sys.exit(code)


__all__ = ["COMMANDS", "Entry", "LazyGroup", "app", "load", "main"]
