"""Run the real `autoresearch` CLI in a subprocess and see which modules it imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FORBIDDEN = ("langgraph", "mlflow", "optuna", "matplotlib", "ray", "mcp", "openai", "anthropic", "sklearn", "torch",
             "starlette", "uvicorn", "jinja2", "sse_starlette")
"""Packages the job and compute commands must never import (each costs 0.1-1 s at start-up; the last
four are the dashboard's web stack, imported by `autoresearch ui` only)."""
READ_FORBIDDEN = (*FORBIDDEN, "pydantic", "rich")
"""What `jobs status|list --json` and `jobs logs` (an agent polls them) must not import either."""

# The CLI's own entry point, plus an atexit hook that writes the names in sys.modules.
_WRAPPER = (
    "import atexit, json, os, sys\n"
    "atexit.register(lambda: open(os.environ['AR_TEST_MODULES'], 'w').write(json.dumps(sorted(sys.modules))))\n"
    "from autoresearch.cli import main\n"
    "main()\n"
)
def _environ() -> dict[str, str]:
    """This process's environment without a terminal size (as a pipe from a fresh shell would see it)."""
    return {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}


def run_cli(home: Path, *args: str, dump: Path, stdin: str | None = None, timeout: float = 120,
            forbidden: tuple[str, ...] = FORBIDDEN) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """(the finished process, the top-level packages it imported that are `forbidden`)."""
    env = {**_environ(), "AUTORESEARCH_HOME": str(home), "PYTHONPATH": str(ROOT), "AR_TEST_MODULES": str(dump)}
    proc = subprocess.run([sys.executable, "-c", _WRAPPER, *args], env=env, cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=timeout)
    modules = json.loads(dump.read_text())
    return proc, sorted({m.split(".")[0] for m in modules} & set(forbidden))
