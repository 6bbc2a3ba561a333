"""The `autoresearch` Typer app; each command module adds its commands to it when imported."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="autoresearch",
    help="An AI agent that runs ML research campaigns on a GPU fleet.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
