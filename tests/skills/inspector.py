"""The MCP Inspector CLI (the official TypeScript SDK's client, as Claude Code uses it), pinned: the
current release, on node >= 22.19, and the last release that runs on node 20 (Debian's nodejs)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector@2.12.0"
"""Pinned; .ci/run fetches it into the npm cache before the tests. Needs node >= 22.19."""
NODE20_INSPECTOR_PACKAGE = "@modelcontextprotocol/inspector@0.15.0"
"""The newest release without node >= 22 in its engines: what node 20 users get. It sends nullable and
`anyOf` arguments as strings."""
NODE_PACKAGE = "node@22.23.3"
"""npm's `node` package (the official node binaries, from the npm registry): .ci/run installs it into
.venv/node and puts its bin folder first on PATH, for INSPECTOR_PACKAGE."""
MIN_NODE = (22, 19)
REPO = Path(__file__).resolve().parents[2]


def npx() -> str | None:
    return shutil.which("npx")


def node_version() -> tuple[int, ...]:
    """The version of the `node` on PATH (what npx runs the Inspector with); () when there is none."""
    node = shutil.which("node")
    if node is None:
        return ()
    done = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60, check=False)
    return tuple(int(part) for part in done.stdout.strip().lstrip("v").split(".") if part.isdigit())


def inspect(home: Path, tracking_uri: str, method: str, tool: str | None = None,
            args: dict[str, str] | None = None, package: str = INSPECTOR_PACKAGE) -> tuple[int, Any]:
    """Run one Inspector CLI call against `autoresearch mcp`: (exit status, its JSON output).

    The server is described in a config file, the one place the CLI takes request timeouts
    from (its default, 60 s for `initialize`, is too short for a loaded 2-core machine)."""
    server = {
        "type": "stdio", "command": sys.executable, "cwd": str(REPO),
        "args": ["-c", "from autoresearch.cli import main; main()", "mcp", "--home", str(home),
                 "--tracking-uri", tracking_uri],
        "env": {"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO), "AUTORESEARCH_HOME": str(home)},
        "requestTimeout": 600_000, "connectionTimeout": 600_000,
    }  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="inspector-") as folder:
        config = Path(folder) / "mcp.json"
        config.write_text(json.dumps({"mcpServers": {"autoresearch": server}}))
        command = [npx() or "npx", "-y", package, "--cli", "--config", str(config), "--server",
                   "autoresearch", "--method", method]
        if tool is not None:
            command += ["--tool-name", tool]
        for key, value in (args or {}).items():
            command += ["--tool-arg", f"{key}={value}"]
        env = {**os.environ, "MCP_INSPECTOR_SECRET_STORE": "memory"}
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False)
    out = done.stdout.strip()
    start = out.find("{")
    try:
        data, _ = json.JSONDecoder().raw_decode(out[start:]) if start >= 0 else (None, 0)
    except json.JSONDecodeError:
        data = None
    if data is None:
        raise AssertionError(f"no JSON from {package} for {method} {tool} {args} (exit {done.returncode}): "
                             f"{out[-1500:]} {done.stderr[:3000]}")
    return done.returncode, data
