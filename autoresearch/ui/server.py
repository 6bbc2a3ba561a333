"""Serving the dashboard with uvicorn: bind, say where it is, optionally open a browser."""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import uvicorn

from autoresearch.ui.app import create_app
from autoresearch.ui.settings import UiError, UiSettings

GRACEFUL_S = 2
"""Seconds open live streams get to close on shutdown (they never end by themselves)."""


def url_of(settings: UiSettings, with_token: bool = False) -> str:
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    query = f"/?token={quote(settings.token)}" if with_token and settings.token else "/"
    return f"http://{host}:{settings.port}{query}"


class _Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    async def startup(self, sockets: list[Any] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self._on_ready()


def serve(settings: UiSettings, open_browser: bool = False, say: Callable[[str], None] = print) -> None:
    """Serve until SIGINT/SIGTERM; raises UiError when the address cannot be bound."""
    app = create_app(settings)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        ws="none",  # live updates are server-sent events: no websockets library to import at start-up
        log_level="warning",
        timeout_graceful_shutdown=GRACEFUL_S,
        access_log=False,
    )

    def ready() -> None:
        mode = " (read-only)" if settings.read_only else ""
        say(f"autoresearch ui{mode} serving {url_of(settings, with_token=True)}")
        if open_browser:
            threading.Thread(target=webbrowser.open, args=(url_of(settings, with_token=True),), daemon=True).start()

    server = _Server(config, ready)
    server.run()
    if not server.started:
        raise UiError(
            f"could not serve on {settings.host}:{settings.port} (in use, or not an address of this "
            "host): pick another with --port or --host"
        )
