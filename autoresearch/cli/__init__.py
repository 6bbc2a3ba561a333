"""The `autoresearch` command line: one click app (autoresearch/cli/_app.py: `app`, `COMMANDS`,
`load`) whose commands are each declared once, in modules imported only when that command runs."""

from __future__ import annotations

import sys

from autoresearch.cli._app import COMMANDS, Entry, LazyGroup, app, load
from autoresearch.cli._app import _register as _register


def main() -> None:
    import sqlite3

    from compute.errors import ComputeError, store_unavailable
    from compute.isolation import seal_process
    from compute.paths import ComputePaths

    seal_process()  # a runner, dashboard, MCP or chat process: jobs may not read its secrets (compute/isolation.py)
    try:
        try:
            app.main(sys.argv[1:], prog_name="autoresearch")
        except sqlite3.OperationalError as err:  # the reads and submissions that use sqlite3 directly
            unavailable = store_unavailable(err, ComputePaths.of().db)
            if unavailable is None:
                raise
            raise unavailable from err
    except ComputeError as err:  # a lost, full or locked store ...: its message says what to do; no traceback
        from autoresearch.cli._plain import write_error

        write_error(str(err))
        sys.exit(1)


__all__ = ["COMMANDS", "Entry", "LazyGroup", "app", "load", "main"]
