"""The MCP Inspector CLI (the official TypeScript SDK's client, as Claude Code uses it), pinned."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector@2.12.0"
"""Pinned; .ci/run fetches it into the npm cache before the tests."""
REPO = Path(__file__).resolve().parents[2]


def npx() -> str | None:
    return shutil.which("npx")


def inspect(home: Path, tracking_uri: str, method: str, tool: str | None = None,
            args: dict[str, str] | None = None) -> tuple[int, Any]:
    """Run one Inspector CLI call against `autoresearch mcp`: (exit status, its JSON output)."""
    server = [sys.executable, "-c", "from autoresearch.cli import main; main()", "mcp", "--home", str(home),
              "--tracking-uri", tracking_uri]
    command = [npx() or "npx", "-y", INSPECTOR_PACKAGE, "--cli", "--connect-timeout", "240000", *server,
               "--method", method]
    if tool is not None:
        command += ["--tool-name", tool]
    for key, value in (args or {}).items():
        command += ["--tool-arg", f"{key}={value}"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "AUTORESEARCH_HOME": str(home)}
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    out = done.stdout.strip()
    start = out.find("{")
    try:
        data, _ = json.JSONDecoder().raw_decode(out[start:]) if start >= 0 else (None, 0)
    except json.JSONDecodeError:
        data = None
    if data is None:
        raise AssertionError(f"no JSON from the inspector (exit {done.returncode}): {out[-2000:]} {done.stderr[-2000:]}")
    return done.returncode, data
