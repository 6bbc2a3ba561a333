"""What every CLI command shares: printing JSON, failing with exit code 2."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer
from pydantic import BaseModel, ValidationError
from rich.console import Console

console = Console()
err_console = Console(stderr=True)

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
    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2, default=str) + "\n")


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one paragraph to stderr and exit (2 = bad input). Never a traceback."""
    err_console.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def validation_message(what: str, err: ValidationError) -> str:
    """One paragraph naming each bad field, what was given and what is allowed."""
    parts = []
    for e in err.errors():
        field = ".".join(str(p) for p in e["loc"]) or "(whole)"
        given = f" (got {e['input']!r})" if "input" in e and not isinstance(e["input"], dict) else ""
        parts.append(f"{field}: {e['msg']}{given}")
    return f"invalid {what}: " + "; ".join(parts) + "."
