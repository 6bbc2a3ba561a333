"""The `autoresearch` typer app. Each command group lives in its own module, imported lazily.

`COMMANDS` is the static table of top-level commands: name -> (module, one-line help). A
command's module is imported only when that command runs, so `jobs status` never pays for
the campaign machinery (langgraph, optuna, mlflow, matplotlib, mcp ...), and `--help` lists
the table without importing any module. Each module defines its own `cli = typer.Typer()`
holding the names the table points at.
"""

from __future__ import annotations

import importlib
from typing import Any, NamedTuple

import typer
from typer import _click
from typer.core import TyperCommand, TyperGroup


class Entry(NamedTuple):
    """Where a top-level command lives and what `--help` says about it."""

    module: str
    help: str


COMMANDS: dict[str, Entry] = {
    "run": Entry("campaign_cmds", "Run a campaign until its budget or target ends it."),
    "resume": Entry("campaign_cmds", "Continue a campaign with the config it last ran with."),
    "status": Entry("status_cmd", "Where a campaign stands; without NAME, every campaign."),
    "report": Entry("campaign_cmds", "Write the campaign's Markdown report with plots."),
    "chat": Entry("chat_cmds", "Steer a running or paused campaign (slash commands on stdin)."),
    "nightly": Entry("nightly_cmds", "Run campaigns unattended inside a window; morning report."),
    "config": Entry("config_cmds", "Campaign config files: JSON Schema and validation."),
    "jobs": Entry("jobs_cmds", "Submit, inspect, cancel and wait for jobs."),
    "compute": Entry("compute_cmds", "Start, stop and inspect the per-host compute daemon and its nodes."),
    "skills": Entry("skills_cmds", "Typed skills (the tools agents use): list, call, export-agent."),
    "mcp": Entry("mcp_cmd", "Serve the skills over MCP (stdio) for coding agents."),
    "ui": Entry("ui_cmd", "Serve the web dashboard: fleet, queue, jobs, campaigns (live, with actions)."),
}


class LazyGroup(TyperGroup):
    """The root group: resolves a command by importing its module on first use."""

    _listing = False

    def list_commands(self, ctx: _click.Context) -> list[str]:
        return [*COMMANDS, *(name for name in self.commands if name not in COMMANDS)]

    def get_command(self, ctx: _click.Context, cmd_name: str) -> _click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:  # a command registered on `app` directly (eagerly)
            return super().get_command(ctx, cmd_name)
        if self._listing:  # --help: the static table, no import
            return TyperCommand(cmd_name, help=entry.help, short_help=entry.help)
        return load(cmd_name)

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def load(name: str) -> _click.Command:
    """The click command `name` of the table, importing its module."""
    module: Any = importlib.import_module(f"autoresearch.cli.{COMMANDS[name].module}")
    group = typer.main.get_group(module.cli)
    command = group.commands.get(name)
    if command is None:
        raise LookupError(f"autoresearch.cli.{COMMANDS[name].module} defines no command {name!r}")
    return command


app = typer.Typer(
    name="autoresearch",
    cls=LazyGroup,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root() -> None:
    """An AI agent that runs ML research campaigns on a GPU fleet.

    Exit codes, for every command: 0 ok, 1 the job or campaign failed, 2 bad input (fix the
    command), 124 a wait timed out. Reading commands take --json (docs/cli.md)."""


def _register() -> None:
    """Import every command module now (tests use it to surface import errors at once)."""
    for name in COMMANDS:
        load(name)
