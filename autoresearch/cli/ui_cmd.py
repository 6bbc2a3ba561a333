"""`autoresearch ui`: the web dashboard (imports the web stack only when this command runs)."""

from __future__ import annotations

import typer

cli = typer.Typer()


@cli.command("ui")
def ui(
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind; not loopback: needs --token."),
    port: int = typer.Option(8765, "--port", help="TCP port."),
    open_browser: bool = typer.Option(False, "--open", help="Open the dashboard in a browser once it serves."),
    token: str | None = typer.Option(
        None, "--token", help="Required on every request (default: $AUTORESEARCH_UI_TOKEN)."
    ),
    read_only: bool = typer.Option(False, "--read-only", help="Hide and refuse every action."),
    allowed_host: list[str] = typer.Option(
        [], "--allowed-host", help="Another name browsers reach it by (a DNS name, a proxy); repeatable."
    ),
) -> None:
    """Serve the web dashboard: fleet, queue, jobs and campaigns, live; with actions unless --read-only."""
    from autoresearch.ui import UiError, checked_settings, serve

    try:
        settings = checked_settings(host, port, token, read_only, allowed_hosts=tuple(allowed_host))
        serve(settings, open_browser=open_browser, say=lambda line: print(line, flush=True))
    except UiError as exc:
        from autoresearch.cli._common import fail  # rich, only to say why it cannot start

        fail(str(exc))
