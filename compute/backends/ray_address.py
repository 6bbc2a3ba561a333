"""The one place that reads the Ray backend's `--address` shorthand (imports no Ray)."""

from __future__ import annotations

import re

from compute.errors import ComputeError

_HOST_PORT = re.compile(r"[A-Za-z0-9._\-\[\]:]+:\d{1,5}")
ADDRESS_FORMS = (
    "none (start a local Ray instance inside the daemon), `local` (the same), `auto` (the cluster this "
    "machine is part of: $RAY_ADDRESS, else the latest `ray start`), `HOST:PORT` (a cluster's GCS address, "
    "from a machine inside it) or `ray://HOST:PORT` (Ray Client, usually port 10001)"
)


def resolve_ray_address(address: str | None) -> str:
    """What to pass to `ray.init(address=...)` for `compute up --backend ray --address ADDRESS`.

    None, "" and "local" start a new local Ray instance in the daemon process ("local",
    never an existing cluster found by chance); "auto" joins the cluster of this machine;
    "HOST:PORT" and "ray://HOST:PORT" are passed on. Anything else is a ComputeError.
    """
    text = (address or "").strip()
    if text in ("", "local"):
        return "local"
    if text == "auto":
        return "auto"
    bare = text.removeprefix("ray://")
    if _HOST_PORT.fullmatch(bare) and 0 < int(bare.rsplit(":", 1)[1]) < 65536:
        return text
    raise ComputeError(f"--address {address!r} is not a Ray address; give one of: {ADDRESS_FORMS}")
