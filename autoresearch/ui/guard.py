"""Who may read and act: the token check and the cross-site request check, in one place.

Rules, for every request when a token is set: it carries the token as `Authorization: Bearer
TOKEN`, or as the `ar_ui_token` cookie the server sets when a page is opened once with
`?token=TOKEN`; else 401. An action (a POST under /api/) is refused (403) in read-only mode;
sent with the cookie (a browser), it must also be a JSON request (a content type a cross-site
form cannot send without a CORS preflight, which this server never grants), carry the page's
CSRF token in `X-CSRF-Token`, and come from this origin (`Sec-Fetch-Site`, `Origin`).
A request with the bearer header is a script, not a browser: no cookie rides along, so there
is nothing to forge.
"""

from __future__ import annotations

import hmac
import secrets
from urllib.parse import urlsplit

from starlette.requests import Request

from autoresearch.ui.settings import UiSettings

COOKIE = "ar_ui_token"
CSRF_HEADER = "x-csrf-token"


class Refused(Exception):
    """A request the guard refuses: HTTP `status` and a message saying what to do."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Guard:
    """The token check and the action check of one server (its CSRF token is made at start)."""

    def __init__(self, settings: UiSettings) -> None:
        self.token = settings.token
        self.read_only = settings.read_only
        self.csrf = secrets.token_urlsafe(24)

    def matches(self, given: str | None) -> bool:
        """Whether `given` is the token (constant-time)."""
        return given is not None and self.token is not None and hmac.compare_digest(given, self.token)

    def bearer(self, request: Request) -> bool:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and self.matches(value.strip())

    def allows(self, request: Request) -> bool:
        """Whether the request may read: no token set, or it carries it."""
        return self.token is None or self.bearer(request) or self.matches(request.cookies.get(COOKIE))

    def check_read(self, request: Request) -> None:
        if not self.allows(request):
            raise Refused(
                401,
                "this dashboard needs its token: open it once as /?token=TOKEN (the token given to "
                "`autoresearch ui --token`), or send `Authorization: Bearer TOKEN`",
            )

    def check_action(self, request: Request) -> None:
        """Raise `Refused` unless the request may act (see the module docstring)."""
        if self.read_only:
            raise Refused(
                403,
                "this dashboard runs with --read-only: actions are off; use the CLI, or restart "
                "`autoresearch ui` without --read-only",
            )
        self.check_read(request)
        if self.bearer(request):
            return
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise Refused(415, "actions are JSON requests: send Content-Type: application/json")
        if not hmac.compare_digest(request.headers.get(CSRF_HEADER, ""), self.csrf):
            raise Refused(403, "missing or stale X-CSRF-Token: reload the page and try again")
        site = request.headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            raise Refused(403, f"cross-site action refused (Sec-Fetch-Site: {site})")
        origin = request.headers.get("origin")
        if origin is not None and urlsplit(origin).netloc != request.headers.get("host", ""):
            raise Refused(403, f"cross-site action refused (Origin {origin} is not this dashboard)")
