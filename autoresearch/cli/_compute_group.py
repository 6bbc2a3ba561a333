"""The `autoresearch compute` group, shared by compute_cmds (daemon) and nodes_cmds (node health)."""

from __future__ import annotations

import typer

compute_app = typer.Typer(help="Start, stop and inspect the per-host compute daemon.", no_args_is_help=True)
cli = typer.Typer()
cli.add_typer(compute_app, name="compute")
