"""The `autoresearch` command line. Each command group lives in its own module."""

from __future__ import annotations

from autoresearch.cli._app import app

__all__ = ["app", "main"]


def _register() -> None:
    # Each module adds its commands to `app` when imported.
    from autoresearch.cli import compute_cmds, jobs_cmds  # noqa: F401
    from autoresearch.cli import nodes_cmds  # noqa: F401
    from autoresearch.cli import mcp_cmd, skills_cmds  # noqa: F401
    from autoresearch.cli import config_cmds  # noqa: F401
    from autoresearch.cli import campaign_cmds  # noqa: F401
    from autoresearch.cli import chat_cmds  # noqa: F401
    from autoresearch.cli import nightly_cmds  # noqa: F401


def main() -> None:
    _register()
    app()
