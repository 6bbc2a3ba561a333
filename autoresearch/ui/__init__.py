"""The web dashboard (`autoresearch ui`): Fleet, Queue, Jobs and Campaigns pages that update live,
and the actions the CLI and chat have (cancel, priority, cordon, pause/resume/stop, budget).

    from autoresearch.ui import checked_settings, create_app, serve
    serve(checked_settings("127.0.0.1", 8765, token=None, read_only=False))

It reads the compute store through `compute.Client` and the campaigns through the readers of
`autoresearch status`; the web stack (Starlette, uvicorn, Jinja2) is imported only here.
"""

from autoresearch.ui.app import create_app
from autoresearch.ui.server import serve, url_of
from autoresearch.ui.settings import TOKEN_ENV, UiError, UiSettings, checked_settings, is_loopback

__all__ = ["TOKEN_ENV", "UiError", "UiSettings", "checked_settings", "create_app", "is_loopback", "serve", "url_of"]
