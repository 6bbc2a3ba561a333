"""What every CLI command shares: printing JSON, failing with exit code 2."""

from __future__ import annotations

from typing import Any, NoReturn

import typer
from pydantic import BaseModel
from rich.console import Console, ConsoleDimensions
from rich.text import Text

from autoresearch.cli._plain import write_json
from compute.errors import validation_message

__all__ = ["JSON_OPTION", "console", "err_console", "fail", "print_json", "to_jsonable", "validation_message", "warn"]

UNWRAPPED_WIDTH = 10_000
"""The width tables and lines get where output is not a terminal (a pipe, a file, an agent): wide
enough that no cell is folded mid-word (`pendin/g`) and no line is wrapped."""


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


console = _CliConsole()
err_console = _CliConsole(stderr=True)

JSON_OPTION = typer.Option(False, "--json", help="Print machine-readable JSON instead of a table.")


def to_jsonable(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
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
    err_console.print(Text.assemble(("warning:", "bold yellow"), " ", message), highlight=False, soft_wrap=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one paragraph to stderr and exit (2 = bad input). Never a traceback."""
    # Text, not markup: a message holding `[...]` or `:name:` is printed as it is (as the fast path does)
    err_console.print(Text.assemble(("error:", "bold red"), " ", message), highlight=False, soft_wrap=True)
    raise typer.Exit(code)
