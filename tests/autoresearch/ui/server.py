"""Run the real `autoresearch ui` command in a subprocess on a free port, for tests."""

from __future__ import annotations

import os
import queue
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def ui_server(home: Path, *args: str, timeout: float = 60.0) -> Iterator[str]:
    """`autoresearch ui --port FREE ARGS` serving `home`; yields its base URL (http://127.0.0.1:PORT)."""
    port = free_port()
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)  # the test's own packages too
    env = {**os.environ, "AUTORESEARCH_HOME": str(home), "PYTHONPATH": path}
    env.pop("AUTORESEARCH_UI_TOKEN", None)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from autoresearch.cli import main; main()", "ui", "--port", str(port), *args],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in proc.stdout or ():
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    try:
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"`autoresearch ui` did not start in {timeout} s: {''.join(seen)}") from None
            seen.append(line)
            if "serving http://" in line:
                break
            if proc.poll() is not None:
                raise AssertionError(f"`autoresearch ui` exited {proc.returncode}: {''.join(seen)}")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
