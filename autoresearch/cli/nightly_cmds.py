"""`autoresearch nightly CONFIG... --until 07:00`: unattended campaigns inside a window, then a
morning report. Run it from cron or a systemd timer (docs/nightly.md)."""

from __future__ import annotations

import logging
import signal
from pathlib import Path
from types import FrameType

import click

from autoresearch.cli._common import console, fail
from autoresearch.nightly import Night, WindowError, window_end, write_morning_report


cli = click.Group()


@cli.command("nightly")
@click.argument("configs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--until", help="When the window ends: HH:MM (the next one) or an ISO datetime.")
@click.option("--duration", type=float, help="Or: the window's length in seconds.")
@click.option("--priority", default="low", show_default=True, help="Compute priority of the night's jobs (preemptible).")
@click.option("--retry-s", type=float, default=30.0, show_default=True, help="Pause before retrying after a compute "
              "or LLM fault.")
@click.option("--guaranteed", is_flag=True, help="Let the night's trials use their project's guaranteed quota "
              "(default: borrowed only, so morning work reclaims them).")
def nightly(configs: tuple[Path, ...], until: str | None, duration: float | None, priority: str, retry_s: float,
            guaranteed: bool) -> None:
    """Run campaigns unattended until the window ends; resume them next night; write a morning report.
    CONFIGS: campaign YAML files; they run concurrently.
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
    night = Night(list(configs), end, priority=priority, retry_s=retry_s, borrowed=not guaranteed)
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
