"""How `autoresearch ui` serves: the `UiSettings` record and the one check of where it may bind."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

from pydantic import BaseModel, ConfigDict

TOKEN_ENV = "AUTORESEARCH_UI_TOKEN"
"""The environment variable read when `--token` is not given."""


class UiError(ValueError):
    """The dashboard cannot start as asked; the message says what to change."""


class UiSettings(BaseModel):
    """Where and how the dashboard serves."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    host: str = "127.0.0.1"
    """The address to bind; anything but a loopback address needs `token`."""
    port: int = 8765
    token: str | None = None
    """When set, every request must carry it (cookie from `/?token=...`, or `Authorization: Bearer`)."""
    read_only: bool = False
    """No action buttons, and every action request is refused (403)."""
    home: Path | None = None
    """The AUTORESEARCH_HOME whose compute store and campaigns it shows (default: the environment's)."""
    allowed_hosts: tuple[str, ...] = ()
    """More names the `Host` header may carry (a DNS name or reverse proxy in front of it), beside
    `localhost`, IP addresses, `host` and this machine's hostname (see guard.py)."""


def is_loopback(host: str) -> bool:
    """Whether `host` (a name or an address) resolves only to loopback addresses."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(str(info[4][0]).split("%")[0]).is_loopback for info in infos)


def checked_settings(host: str, port: int, token: str | None, read_only: bool, home: Path | None = None,
                     allowed_hosts: tuple[str, ...] = ()) -> UiSettings:
    """The settings, with the token from $AUTORESEARCH_UI_TOKEN when `token` is None; raises
    `UiError` for a non-loopback `host` without a token, or a port out of range."""
    token = token if token is not None else (os.environ.get(TOKEN_ENV) or None)
    if token is not None and len(token) < 8:
        raise UiError(
            f"--token is {len(token)} characters long; use at least 8 (e.g. `--token $(openssl rand -hex 16)`)"
        )
    if not 0 < port < 65536:
        raise UiError(f"--port {port} is not a TCP port; use 1-65535 (default 8765)")
    if not is_loopback(host) and token is None:
        raise UiError(
            f"--host {host} is not a loopback address, so anyone who can reach it could act on the fleet: pass "
            f"--token SECRET (or set {TOKEN_ENV}), or bind to 127.0.0.1 (the default) and use an SSH tunnel"
        )
    for name in allowed_hosts:
        if not name or any(c in name for c in "/:@ "):
            raise UiError(f"--allowed-host {name!r} is not a host name; give the name alone, e.g. "
                          "--allowed-host dash.example.org (no scheme, port or path)")
    return UiSettings(host=host, port=port, token=token, read_only=read_only, home=home,
                      allowed_hosts=tuple(n.lower().rstrip(".") for n in allowed_hosts))
