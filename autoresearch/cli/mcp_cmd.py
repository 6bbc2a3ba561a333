"""`autoresearch mcp`: the skills as an MCP server on stdin/stdout, for coding agents."""

from __future__ import annotations

from pathlib import Path

import click

from autoresearch.cli.skills_cmds import cli_context, context_options
from autoresearch.cli.skills_list import campaign_option, cli_registry

cli = click.Group()


@cli.command("mcp")
@context_options
@campaign_option
def mcp(home: Path | None, tracking_uri: str | None, max_bytes: int, campaign: str | None) -> None:
    """Serve the skills over MCP (stdio). Add to a coding agent as: autoresearch mcp
    (with --campaign NAME, also that campaign's read-only trial skills and its steering:
    pause, resume, stop, note, set_budget, set_space, set_priority, try_trial, cancel_trial, approve, deny)."""
    from skills.mcp_server import build_mcp_server

    ctx = cli_context(home, tracking_uri, max_bytes, campaign)
    try:
        build_mcp_server(cli_registry(campaign), ctx).run("stdio")
    finally:
        ctx.close()
