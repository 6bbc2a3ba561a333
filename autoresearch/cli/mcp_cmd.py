"""`autoresearch mcp`: the skills as an MCP server on stdin/stdout, for coding agents."""

from __future__ import annotations

from pathlib import Path

from autoresearch.cli import app
from autoresearch.cli._common import fail
from autoresearch.cli.skills_cmds import HOME_OPTION, MAX_BYTES_OPTION, TRACKING_OPTION, cli_registry
from skills import SkillContext
from skills.mcp_server import build_mcp_server


@app.command("mcp")
def mcp(
    home: Path | None = HOME_OPTION,
    tracking_uri: str | None = TRACKING_OPTION,
    max_bytes: int = MAX_BYTES_OPTION,
) -> None:
    """Serve the skills over MCP (stdio). Add to a coding agent as: autoresearch mcp"""
    try:
        ctx = SkillContext.create(home=home, tracking_uri=tracking_uri, max_output_bytes=max_bytes)
    except ValueError as exc:
        fail(str(exc))
    try:
        build_mcp_server(cli_registry(), ctx).run("stdio")
    finally:
        ctx.close()
