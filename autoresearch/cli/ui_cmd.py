"""`autoresearch ui`: the web dashboard (imports the web stack only when this command runs)."""

from __future__ import annotations

import click

cli = click.Group()


@cli.command("ui")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind; not loopback: needs --token.")
@click.option("--port", type=int, default=8765, show_default=True, help="TCP port.")
@click.option("--open", "open_browser", is_flag=True, help="Open the dashboard in a browser once it serves.")
@click.option("--token", help="Required on every request (default: $AUTORESEARCH_UI_TOKEN).")
@click.option("--read-only", is_flag=True, help="Hide and refuse every action.")
@click.option("--allowed-host", multiple=True, help="Another name browsers reach it by (a DNS name, a proxy); repeatable.")
def ui(host: str, port: int, open_browser: bool, token: str | None, read_only: bool, allowed_host: tuple[str, ...]) -> None:
    """Serve the web dashboard: fleet, queue, jobs and campaigns, live; with actions unless --read-only."""
    from autoresearch.ui import UiError, checked_settings, serve

    try:
        settings = checked_settings(host, port, token, read_only, allowed_hosts=tuple(allowed_host))
        serve(settings, open_browser=open_browser, say=lambda line: print(line, flush=True))
    except UiError as exc:
        from autoresearch.cli._common import fail

        fail(str(exc))
