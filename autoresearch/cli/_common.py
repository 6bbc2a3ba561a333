"""What every CLI command shares: the `--json` option, printing JSON, failing with exit code 2.

Imports neither rich nor pydantic: `console` and `err_console` are made (importing rich) when a
command first prints through them, so a command that prints JSON never pays for rich."""

from __future__ import annotations

import os

from functools import cache
from typing import TYPE_CHECKING, Any, NoReturn

import click

from autoresearch.cli._plain import write_error, write_json

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["json_option", "console", "err_console", "fail", "print_json", "to_jsonable", "warn"]

UNWRAPPED_WIDTH = 10_000
"""The width tables and lines get where output is not a terminal (a pipe, a file, an agent): wide
enough that no cell is folded mid-word (`pendin/g`) and no line is wrapped."""

json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON instead of a table.")
"""`--json`, which every reading command takes."""


def _console(stderr: bool) -> Console:
    """The console for the stream, made once per COLUMNS value (rich reads COLUMNS only when a console
    is made: one made under another COLUMNS, as by an earlier in-process invocation, keeps its width)."""
    return _console_for(stderr, os.environ.get("COLUMNS"))


@cache
def _console_for(stderr: bool, columns: str | None) -> Console:
    from rich.console import Console, ConsoleDimensions

    class _CliConsole(Console):
        """A terminal's width on a terminal; elsewhere (unless COLUMNS sets one) no wrapping at all."""

        @property
        def size(self) -> ConsoleDimensions:
            if self._width is None and not self.is_terminal:
                return ConsoleDimensions(UNWRAPPED_WIDTH, super().size.height)
            return super().size

        @size.setter
        def size(self, new_size: tuple[int, int]) -> None:
            self._width, self._height = new_size

    return _CliConsole(stderr=stderr)


class _LazyConsole:
    """Stands for the rich console, made on first use."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr

    def __getattr__(self, name: str) -> Any:
        return getattr(_console(self._stderr), name)


console: Console = _LazyConsole(False)  # type: ignore[assignment]
"""The rich console on stdout (tables, coloured lines)."""
err_console: Console = _LazyConsole(True)  # type: ignore[assignment]
"""The rich console on stderr."""


def to_jsonable(obj: Any) -> Any:
    if hasattr(obj, "model_dump"):  # a pydantic model (without importing pydantic to ask)
        return obj.model_dump(mode="json")
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(o) for o in obj]
    if isinstance(obj, dict):
        return {k: to_jsonable(v) for k, v in obj.items()}
    return obj


def print_json(obj: Any) -> None:
    write_json(to_jsonable(obj))


def warn(message: str) -> None:
    """Print one paragraph to stderr, as `fail` does, and go on."""
    write_error(message, label="warning:", color="1;33")


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one paragraph to stderr and exit (2 = bad input). Never a traceback."""
    write_error(message)
    raise click.exceptions.Exit(code)
