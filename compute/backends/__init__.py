"""Backends run attempts on nodes behind the small `Backend` protocol."""

from compute.backends.base import AttemptExit, Backend, LaunchError, LaunchRequest, WakesDaemon, Warms
from compute.backends.local import LocalBackend

__all__ = ["AttemptExit", "Backend", "LaunchError", "LaunchRequest", "LocalBackend", "WakesDaemon", "Warms"]
