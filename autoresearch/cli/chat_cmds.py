"""`autoresearch chat NAME`: attach to a campaign from any terminal; questions and steering.

Reads lines from stdin: interactively with a prompt on a terminal, or line by line from a
pipe (agents and scripts): `printf '/space lr=1e-4..1e-2\\n/status\\n' | autoresearch chat NAME`.
What the runner applies is said as it happens; on a terminal such a line goes above the `> `
prompt, which is drawn again with what was typed so far.
"""

from __future__ import annotations

import getpass
import os
import sys
import threading
import time
from collections.abc import Iterator

import click

from autoresearch.chat import ChatError, ChatSession, Conversation, chat_provider
from autoresearch.cli._common import fail


cli = click.Group()


@cli.command("chat")
@click.argument("name")
@click.option("--model", help="provider:model for plain language (default: the campaign's policy model when its key "
              "is set).")
@click.option("--base-url", help="Endpoint for --model (OpenAI-compatible).")
@click.option("--no-llm", is_flag=True, help="Slash commands only, even when a model is configured.")
@click.option("--author", help="Who is steering (default: your user name).")
@click.option("--wait", type=float, default=15.0, show_default=True, help="At the end of input, seconds to wait for a "
              "live runner to apply the changes posted (and print what it did).")
def chat(name: str, model: str | None, base_url: str | None, no_llm: bool, author: str | None, wait: float) -> None:
    """Steer a running or paused campaign NAME: questions, search space, budget, pause/resume/stop, approvals."""
    try:
        session = ChatSession(name, author=author or _user())
        provider = None if no_llm else chat_provider(session.campaign(), model, base_url)
    except ChatError as exc:
        fail(str(exc))
    conversation = Conversation(session, provider)
    interactive = sys.stdin.isatty()
    pid = session.runner_pid()
    mode = f"model {getattr(provider, 'model', 'configured')}" if provider else "slash commands only (no LLM)"
    runner = f"runner pid {pid}" if pid else "no runner attached"
    _say(f"chat with campaign {name} ({session.ledger().state.value}; {runner}; {mode}). /help lists the commands.")
    stop = threading.Event()
    threading.Thread(target=_watch, args=(session, stop), daemon=True).start()
    try:
        for line in _lines(interactive):
            for text in conversation.handle(line):
                _say(text)
            if conversation.done:
                break
    finally:
        stop.set()
    _finish(session, wait)


def _watch(session: ChatSession, stop: threading.Event) -> None:
    """Say what the runner did with this session's messages as soon as it does it."""
    while not stop.wait(0.3):
        _report(session)


PROMPT = "> "
_PRINT = threading.Lock()
_prompting = threading.Event()
"""Set while `input()` shows the prompt and waits."""


def _lines(interactive: bool) -> Iterator[str]:
    if not interactive:
        yield from sys.stdin
        return
    try:
        import readline  # noqa: F401 - line editing for input(), and what was typed for _say
    except ImportError:  # not on every platform
        pass
    while True:
        with _PRINT:
            _prompting.set()
        try:
            line = input(PROMPT)
        except (EOFError, KeyboardInterrupt):
            print()
            return
        finally:
            _prompting.clear()
        yield line


def _report(session: ChatSession) -> None:
    for message in session.outcomes():
        _say(f"applied #{message.id} {message.kind}: {message.outcome}")


def _finish(session: ChatSession, wait: float) -> None:
    """Wait (bounded) for a live runner to apply what this session posted; say what is left."""
    deadline = time.monotonic() + wait
    while session.unapplied() and session.runner_pid() and time.monotonic() < deadline:
        _report(session)
        time.sleep(0.2)
    _report(session)
    left = session.unapplied()
    if left:
        ids = ", ".join(f"#{i}" for i in left)
        _say(f"not applied yet: {ids} (the runner applies them at its next replan, or when the campaign runs again)")


def _say(text: str) -> None:
    """Print a line; while the prompt waits, above it: clear the prompt's line, print, redraw it."""
    with _PRINT:
        if not _prompting.is_set():
            print(text, flush=True)
            return
        sys.stdout.write(f"\r\x1b[K{text}\n{PROMPT}{_typed()}")
        sys.stdout.flush()


def _typed() -> str:
    """What the person has typed at the prompt so far (readline's buffer)."""
    readline = sys.modules.get("readline")
    return readline.get_line_buffer() if readline is not None else ""


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return os.environ.get("USER", "chat")
