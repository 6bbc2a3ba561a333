"""Backends run attempts on nodes behind the small `Backend` protocol.

`RayBackend` is imported on first use (it imports ray, ~0.5 s): `from compute.backends
import RayBackend` works, `import compute` stays light.
"""

from typing import Any

from compute.backends.base import (
    AttemptExit, Backend, ChangesNodes, LaunchError, LaunchRequest, ProbesOnNodes, SuspectsNodes, WakesDaemon, Warms,
)
from compute.backends.local import LocalBackend
from compute.backends.ray_address import resolve_ray_address

__all__ = [
    "AttemptExit", "Backend", "ChangesNodes", "LaunchError", "LaunchRequest", "LocalBackend", "ProbesOnNodes", "RayBackend", "SuspectsNodes",
    "WakesDaemon", "Warms", "resolve_ray_address",
]


def __getattr__(name: str) -> Any:
    if name == "RayBackend":
        from compute.backends.ray import RayBackend

        return RayBackend
    raise AttributeError(f"module 'compute.backends' has no attribute {name!r}")
