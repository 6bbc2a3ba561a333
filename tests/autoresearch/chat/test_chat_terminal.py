"""`autoresearch chat NAME` on a terminal (a pseudo-terminal the test holds): a mistyped field
gets a did-you-mean, and what the runner applies is printed above the `> ` prompt, which is
drawn again with what the person had typed."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time

from autoresearch.campaign import CampaignPaths, Ledger
from autoresearch.chat import ChatSession, Conversation
from autoresearch.steering import Inbox
from tests.autoresearch.chat.conftest import CLI, cli_env
from tests.autoresearch.runner.conftest import campaign_of, synthetic_config


def test_a_mistyped_budget_field_says_which_one_was_meant(tracking, tmp_path, monkeypatch):
    monkeypatch.setenv("AUTORESEARCH_HOME", str(tmp_path))
    data = synthetic_config(tracking)
    Ledger.open(campaign_of(data))
    [line] = Conversation(ChatSession(data["name"])).handle("/budget max_trails=20")
    assert line.startswith("error: budget has no field 'max_trails' (did you mean 'max_trials'?); fields: max_trials,")
    assert "skills list" not in line  # a chat user is not sent to the tooling


class Terminal:
    """A process whose stdin and stdout are a pseudo-terminal; everything it wrote, raw."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.fd, child = pty.openpty()
        self.process = subprocess.Popen(argv, stdin=child, stdout=child, stderr=subprocess.PIPE, env=env)
        os.close(child)
        self.seen = b""

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def expect(self, needle: str, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        while needle.encode() not in self.seen:
            assert time.monotonic() < deadline, f"no {needle!r} in {self.seen!r}"
            if select.select([self.fd], [], [], 0.2)[0]:
                self.seen += os.read(self.fd, 4096)
        return self.seen.decode(errors="replace")


def test_what_the_runner_applies_goes_above_the_prompt_and_keeps_what_was_typed(tracking, tmp_path):
    data = synthetic_config(tracking)
    env = cli_env(tmp_path, TERM="xterm")
    os.environ["AUTORESEARCH_HOME"], before = str(tmp_path), os.environ.get("AUTORESEARCH_HOME")
    try:
        Ledger.open(campaign_of(data))
    finally:
        os.environ.pop("AUTORESEARCH_HOME") if before is None else os.environ.__setitem__("AUTORESEARCH_HOME", before)
    terminal = Terminal([*CLI, "chat", data["name"], "--no-llm", "--wait", "0"], env)
    try:
        terminal.type("/budget max_trials=20\n")
        terminal.expect("queued #1 budget.max_trials: 4 -> 20")
        terminal.type("/sta")  # typed, not yet entered
        terminal.expect("/sta")
        inbox = Inbox(CampaignPaths.of(data["name"], tmp_path))
        inbox.mark_handled(1, "budget.max_trials: 4 -> 20")  # as the runner does at its replan
        inbox.close()
        shown = terminal.expect("applied #1 budget: budget.max_trials: 4 -> 20\r\n> /sta")
        assert "\r\x1b[Kapplied #1" in shown  # the prompt's line was cleared first, not written over
        terminal.type("tus\n")
        terminal.expect("search space: x1 float [-5, 10]")  # the line typed around the message is whole
        terminal.expect("best: no complete trial yet\r\n> ")  # and the prompt is back
        terminal.type("\x04")
        assert terminal.process.wait(60) == 0
    finally:
        if terminal.process.poll() is None:
            terminal.process.kill()
        os.close(terminal.fd)
