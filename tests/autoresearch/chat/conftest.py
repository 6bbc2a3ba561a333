"""A campaign runner as a real subprocess (`autoresearch run CONFIG`) on the synthetic job, and
`autoresearch chat NAME` driven through stdin, both against the test's compute daemon."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autoresearch.campaign import CampaignState, Ledger, TrialRecord, campaign_dir
from tests.autoresearch.runner.conftest import REPO, wait_until, write_config

CLI = [sys.executable, "-c", "from autoresearch.cli import main; main()"]


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "AUTORESEARCH_HOME": str(home), **extra}


def chat(home: Path, name: str, *lines: str, wait: float = 60.0, args: tuple[str, ...] = ("--no-llm",),
         **env: str) -> str:
    """Run `autoresearch chat NAME` with these input lines; its stdout (exit code 0 asserted)."""
    done = subprocess.run([*CLI, "chat", name, "--author", "alice", "--wait", str(wait), *args],
                          input="".join(f"{line}\n" for line in lines), env=cli_env(home, **env),
                          capture_output=True, text=True, timeout=180)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    return done.stdout


class ChatProcess:
    """A long-lived `autoresearch chat NAME` whose stdin the test writes line by line."""

    def __init__(self, home: Path, name: str, *args: str, **env: str) -> None:
        self.process = subprocess.Popen([*CLI, "chat", name, "--author", "alice", "--wait", "60", *args],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        env=cli_env(home, **env), text=True, bufsize=1)  # fmt: skip
        self.output: list[str] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def send(self, *lines: str) -> None:
        assert self.process.stdin is not None
        for line in lines:
            self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def expect(self, needle: str, timeout: float = 90.0) -> str:
        """The first line (seen before or read now) that contains `needle`."""
        for line in self.output:
            if needle in line:
                return line
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError(f"no line with {needle!r} in chat output:\n" + "\n".join(self.output))
            self.output.append(line)
            if needle in line:
                return line

    def close(self) -> str:
        """End input; the whole output (exit code 0 and no traceback asserted)."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(120) == 0, self.process.stderr.read() if self.process.stderr else ""
        while (line := self._lines.get(timeout=10)) is not None:
            self.output.append(line)
        stderr = self.process.stderr.read() if self.process.stderr else ""
        assert "Traceback" not in stderr, stderr
        return "\n".join(self.output)


class Runner:
    """`autoresearch run CONFIG --quiet` in its own process."""

    def __init__(self, home: Path, tmp: Path, data: dict[str, Any]) -> None:
        self.name = data["name"]
        self.log = (tmp / f"{self.name}.runner.log").open("w")
        config = write_config(tmp, data)
        self.process = subprocess.Popen([*CLI, "run", str(config), "--quiet"], env=cli_env(home),
                                        stdout=self.log, stderr=subprocess.STDOUT)  # fmt: skip

    def wait(self, timeout: float = 120.0) -> int:
        return self.process.wait(timeout)

    def output(self) -> str:
        self.log.flush()
        return Path(self.log.name).read_text()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.log.close()


@pytest.fixture
def start_runner(compute_home: Path, tmp_path: Path) -> Iterator[Any]:
    runners: list[Runner] = []

    def start(data: dict[str, Any]) -> Runner:
        runner = Runner(compute_home, tmp_path, data)
        runners.append(runner)
        wait_until(lambda: (campaign_dir(runner.name) / "graph.db").exists() or runner.process.poll() is not None,
                   what="the runner to open its campaign")  # fmt: skip
        assert runner.process.poll() is None, runner.output()
        return runner

    yield start
    for runner in runners:
        runner.close()


def trials(name: str) -> list[TrialRecord]:
    return Ledger.load(name).trials()


def state(name: str) -> CampaignState:
    return Ledger.load(name).state
