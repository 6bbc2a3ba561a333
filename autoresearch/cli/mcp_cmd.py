"""`autoresearch mcp`: the skills as an MCP server on stdin/stdout, for coding agents."""

from __future__ import annotations

from pathlib import Path

import typer

from autoresearch.cli.skills_cmds import (
    CAMPAIGN_OPTION,
    HOME_OPTION,
    MAX_BYTES_OPTION,
    TRACKING_OPTION,
    cli_context,
    cli_registry,
)
from skills.mcp_server import build_mcp_server

cli = typer.Typer()


@cli.command("mcp")
def mcp(
    home: Path | None = HOME_OPTION,
    tracking_uri: str | None = TRACKING_OPTION,
    max_bytes: int = MAX_BYTES_OPTION,
    campaign: str | None = CAMPAIGN_OPTION,
) -> None:
    """Serve the skills over MCP (stdio). Add to a coding agent as: autoresearch mcp
    (with --campaign NAME, also that campaign's read-only trial skills and its steering:
    pause, resume, stop, note, set_budget, set_space, set_priority, try_trial, cancel_trial, approve, deny)."""
    ctx = cli_context(home, tracking_uri, max_bytes, campaign)
    try:
        build_mcp_server(cli_registry(campaign), ctx).run("stdio")
    finally:
        ctx.close()
