"""`autoresearch nightly CONFIG... --until 07:00`: unattended campaigns inside a window, then a
morning report. Run it from cron or a systemd timer (docs/nightly.md)."""

from __future__ import annotations

import logging
import signal
from pathlib import Path
from types import FrameType

import typer

from autoresearch.cli._common import console, fail
from autoresearch.nightly import Night, WindowError, window_end, write_morning_report


cli = typer.Typer()


@cli.command("nightly")
def nightly(
    configs: list[Path] = typer.Argument(..., help="Campaign YAML files; they run concurrently."),
    until: str | None = typer.Option(None, "--until", help="When the window ends: HH:MM (the next one) or an "
                                        "ISO datetime."),  # fmt: skip
    duration: float | None = typer.Option(None, "--duration", help="Or: the window's length in seconds."),
    priority: str = typer.Option("low", "--priority", help="Compute priority of the night's jobs (preemptible)."),
    retry_s: float = typer.Option(30.0, "--retry-s", help="Pause before retrying after a compute or LLM fault."),
    guaranteed: bool = typer.Option(False, "--guaranteed", help="Let the night's trials use their project's "
                                    "guaranteed quota (default: borrowed only, so morning work reclaims them)."),
) -> None:
    """Run campaigns unattended until the window ends; resume them next night; write a morning report.
    SIGTERM or Ctrl-C ends the window early the same way (trials stopped and queued, report written)."""
    try:
        end = window_end(until, duration)
    except WindowError as exc:
        fail(str(exc))
    missing = [str(c) for c in configs if not c.is_file()]
    if missing:
        fail(f"config file(s) not found: {', '.join(missing)}; pass campaign YAML files")
    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)
    night = Night(configs, end, priority=priority, retry_s=retry_s, borrowed=not guaranteed)
    night.say(f"nightly: {len(configs)} campaign(s) until {end:%Y-%m-%d %H:%M:%S}, priority {priority}")

    def cut_short(signum: int, frame: FrameType | None) -> None:
        if night.result.ended_early and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: leave now (`autoresearch resume` tidies up)
        night.stop("SIGTERM" if signum == signal.SIGTERM else "Ctrl-C")

    previous = {sig: signal.signal(sig, cut_short) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        result = night.run()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    path = write_morning_report(result)
    console.print(f"morning report: {path}", highlight=False, soft_wrap=True)
