"""One command-line parser: every command is declared once, in the module `COMMANDS` names, and
every command those modules declare is in the table (so none is reachable by another path)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import click

from autoresearch.cli import COMMANDS, app, load

CLI = Path(__file__).resolve().parents[3] / "autoresearch" / "cli"


def test_each_command_of_the_table_is_declared_once() -> None:
    declared: dict[tuple[str, str], int] = {}
    for path in CLI.glob("*.py"):
        for name in re.findall(r'\.(?:command|group)\("([a-z-]+)"', path.read_text()):
            declared[(path.stem, name)] = declared.get((path.stem, name), 0) + 1
    for path, entry in COMMANDS.items():
        command = load(path)
        assert command.name == path.split()[-1], path
        if entry.module is None:
            assert isinstance(command, click.Group) and command.list_commands(click.Context(command)), path
            continue
        group = path.rpartition(" ")[0]
        siblings = {e.module for p, e in COMMANDS.items() if p.rpartition(" ")[0] == group and e.module}
        count = sum(declared.get((module, path.split()[-1]), 0) for module in siblings)
        assert count == 1, f"{path}: declared {count} times in {sorted(siblings)}"


def test_every_module_holds_only_commands_of_the_table() -> None:
    modules = {e.module for e in COMMANDS.values() if e.module is not None}
    for module_name in modules:
        module = importlib.import_module(f"autoresearch.cli.{module_name}")
        for name in module.cli.commands:
            paths = [p for p, e in COMMANDS.items() if e.module == module_name and p.split()[-1] == name]
            assert len(paths) == 1, f"autoresearch.cli.{module_name} declares {name!r}, which the table does not name"


HELPERS = {"__init__", "__main__", "_app", "_common", "_plain", "_logs", "_submit_options", "agent_bundle"}
"""Modules of the package that declare no command: the app and its table, printing and parsing
helpers, `jobs submit`'s option facts (generated from `compute.JobRequest`), the agent bundle's
text. A module that answers command lines itself (as a fast path beside the parser once did) would
have to be added here: a second parser is a visible decision."""


def test_the_package_holds_command_modules_of_the_table_and_helpers_only() -> None:
    commands = {e.module for e in COMMANDS.values() if e.module is not None}
    assert {p.stem for p in CLI.glob("*.py")} == commands | HELPERS
    for helper in HELPERS - {"_app", "_common"}:  # click is the one parser, declared in command modules
        assert not re.search(r"^(import|from) (click|argparse|typer)\b", (CLI / f"{helper}.py").read_text(), re.M), helper


def test_help_lists_the_table_without_importing_a_command_module() -> None:
    import subprocess
    import sys

    code = ("import sys\nfrom autoresearch.cli import app\ntry:\n    app.main(['--help'], prog_name='autoresearch')\n"
            "except SystemExit:\n    pass\nprint(sorted(m for m in sys.modules if m.startswith('autoresearch.cli.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "jobs" in out and "Submit, inspect, cancel and wait for jobs." in out
    assert out.strip().splitlines()[-1] == "['autoresearch.cli._app']"
    assert app.name == "autoresearch"
