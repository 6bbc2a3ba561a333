"""Who may read and act: the host check, the token check and the cross-site request check, in one place.

Every request, token or not, must name this dashboard in its `Host` header: `localhost`, an IP
address, the `--host` it binds, this machine's hostname, or a name given with `--allowed-host`;
else 400. A web page that rebinds its own DNS name to 127.0.0.1 (DNS rebinding) sends its own name
there, so it can neither read a page (nor the CSRF token in it) nor act. An IP address cannot be
rebound, so every literal address is accepted (a loopback bind is reachable on loopback only).
Every action carrying an `Origin` header must come from the origin it is sent to.

Then, for every request when a token is set: it carries the token as `Authorization: Bearer
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
import ipaddress
import secrets
import socket
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


def host_name(netloc: str) -> str:
    """The host of a `Host` header or URL netloc, lowercased, without port, brackets or final dot."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):
        return netloc[1 : netloc.find("]")] if "]" in netloc else netloc
    return netloc.rsplit(":", 1)[0].rstrip(".") if netloc.count(":") == 1 else netloc.rstrip(".")


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class Guard:
    """The host, token and action checks of one server (its CSRF token is made at start)."""

    def __init__(self, settings: UiSettings) -> None:
        self.token = settings.token
        self.read_only = settings.read_only
        self.csrf = secrets.token_urlsafe(24)
        self.hosts = frozenset({"localhost", host_name(settings.host), socket.gethostname().lower(),
                                *settings.allowed_hosts})  # fmt: skip
        """The names (beyond IP addresses) the `Host` header may carry."""

    def check_host(self, host: str | None) -> None:
        """Raise `Refused` (400) unless `host` (the `Host` header; None: a client that sent none) names this server."""
        if host is None:
            return  # no browser sends a request without one
        name = host_name(host)
        if name in self.hosts or _is_address(name):
            return
        raise Refused(
            400,
            f"Host {host!r} is not a name this dashboard serves (it answers to "
            f"{', '.join(sorted(self.hosts))} and IP addresses); a web page on another site may be "
            "trying to reach it. If you reach it by that name on purpose (a DNS name, a proxy), restart "
            f"it with `autoresearch ui --allowed-host {name}`",
        )

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
        origin = request.headers.get("origin")
        if origin is not None and (origin == "null" or urlsplit(origin).netloc != request.headers.get("host", "")):
            raise Refused(403, f"cross-site action refused (Origin {origin} is not this dashboard)")
        if self.bearer(request):
            return
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise Refused(415, "actions are JSON requests: send Content-Type: application/json")
        if not hmac.compare_digest(request.headers.get(CSRF_HEADER, ""), self.csrf):
            raise Refused(403, "missing or stale X-CSRF-Token: reload the page and try again")
        site = request.headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            raise Refused(403, f"cross-site action refused (Sec-Fetch-Site: {site})")
