"""The `autoresearch` command line: one click app, each command declared once, in its own module.

`COMMANDS` is the static table of commands: path -> (module, one-line help). A command's module
is imported only when that command runs (or a group's `--help` lists it), so `jobs status` never
pays for the campaign machinery (langgraph, optuna, mlflow, matplotlib, mcp ...) nor for pydantic,
and `autoresearch --help` lists the table without importing any module. A group's help is its
entry here; a command's help is its docstring. Each module holds its commands on a `cli` group
(a holder, never run itself) under the names the table points at.
"""

from __future__ import annotations

import importlib
from typing import Any, NamedTuple

import click


class Entry(NamedTuple):
    """Where a command lives (None: a group, its commands are the entries below it) and its one-line help."""

    module: str | None
    help: str = ""
    """Top-level entries: what `autoresearch --help` lists (without importing the module). A group's
    command has none here: `GROUP --help` lists its docstring's first line."""


COMMANDS: dict[str, Entry] = {
    "run": Entry("campaign_cmds", "Run a campaign until its budget or target ends it."),
    "resume": Entry("campaign_cmds", "Continue a campaign with the config it last ran with."),
    "status": Entry("status_cmd", "Where a campaign stands; without NAME, every campaign."),
    "report": Entry("campaign_cmds", "Write the campaign's Markdown report with plots."),
    "chat": Entry("chat_cmds", "Steer a running or paused campaign (slash commands on stdin)."),
    "nightly": Entry("nightly_cmds", "Run campaigns unattended inside a window; morning report."),
    "config": Entry(None, "Campaign config files: JSON Schema and validation."),
    "config schema": Entry("config_cmds"),
    "config check": Entry("config_cmds"),
    "jobs": Entry(None, "Submit, inspect, cancel and wait for jobs."),
    "jobs submit": Entry("jobs_submit"),
    "jobs list": Entry("jobs_cmds"),
    "jobs status": Entry("jobs_cmds"),
    "jobs logs": Entry("jobs_cmds"),
    "jobs cancel": Entry("jobs_cmds"),
    "jobs priority": Entry("jobs_cmds"),
    "jobs wait": Entry("jobs_cmds"),
    "compute": Entry(None, "Start, stop and inspect the per-host compute daemon and its nodes."),
    "compute up": Entry("compute_cmds"),
    "compute down": Entry("compute_cmds"),
    "compute status": Entry("compute_cmds"),
    "compute nodes": Entry("compute_cmds"),
    "compute cordon": Entry("nodes_cmds"),
    "compute uncordon": Entry("nodes_cmds"),
    "compute inject-fault": Entry("nodes_cmds"),
    "compute project": Entry("projects_cmds"),
    "compute projects": Entry("projects_cmds"),
    "skills": Entry(None, "Typed skills (the tools agents use): list, call, export-agent."),
    "skills list": Entry("skills_list"),
    "skills call": Entry("skills_cmds"),
    "skills export-agent": Entry("skills_cmds"),
    "mcp": Entry("mcp_cmd", "Serve the skills over MCP (stdio) for coding agents."),
    "ui": Entry("ui_cmd", "Serve the web dashboard: fleet, queue, jobs, campaigns (live, with actions)."),
}
"""Every command, by its path; a group's commands follow it. tests/autoresearch/cli/test_one_parser.py
checks each entry resolves to one command declared once."""


class LazyGroup(click.Group):
    """A group whose commands are the `COMMANDS` entries below `prefix`, imported when used."""

    def __init__(self, prefix: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.prefix = prefix

    def _names(self) -> list[str]:
        depth = len(self.prefix.split()) + 1
        return [p.split()[-1] for p in COMMANDS if len(p.split()) == depth and p.startswith(f"{self.prefix} ".lstrip())]

    def list_commands(self, ctx: click.Context) -> list[str]:
        return self._names()

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        path = f"{self.prefix} {cmd_name}".strip()
        if path not in COMMANDS:
            return None
        return load(path)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command's one-line help: the table's at the top (`autoresearch --help` imports no command
        module), the command's own in a group (`jobs --help` imports the group's modules)."""
        rows = [(name, COMMANDS[path].help or load(path).get_short_help_str(limit=150))
                for name in self._names() for path in [f"{self.prefix} {name}".strip()]]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def load(path: str) -> click.Command:
    """The click command at `path` (`jobs status`), importing its module (a group: built from the table)."""
    entry = COMMANDS[path]
    if entry.module is None:
        return LazyGroup(path, name=path.split()[-1], help=entry.help, no_args_is_help=True)
    module: Any = importlib.import_module(f"autoresearch.cli.{entry.module}")
    command = module.cli.commands.get(path.split()[-1])
    if command is None:
        raise LookupError(f"autoresearch.cli.{entry.module} defines no command {path!r}")
    return command


app = LazyGroup(
    "",
    name="autoresearch",
    no_args_is_help=True,
    help="An AI agent that runs ML research campaigns on a GPU fleet.\n\n"
    "Exit codes, for every command: 0 ok, 1 the job or campaign failed, 2 bad input (fix the "
    "command), 124 a wait timed out. Reading commands take --json (docs/cli.md).",
)


def _register() -> None:
    """Import every command module now (tests use it to surface import errors at once)."""
    for path in COMMANDS:
        load(path)
