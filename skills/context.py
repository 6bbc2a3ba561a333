"""What every skill call gets besides its arguments: clients, tracking config, output bound."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from compute.paths import resolve_home
from tracking import MlflowTracker, Tracker, TrackingConfig, resolve_tracking

if TYPE_CHECKING:
    from compute import Client

DEFAULT_MAX_OUTPUT_BYTES = 16_000
"""About 4k tokens: enough for a page of jobs or a log tail, small for a context window."""


@dataclass
class SkillContext:
    """Shared by all calls of one session (CLI command, MCP server, agent run).

    The compute client and the tracker are made on first use, so skills that need
    neither (and `skills list`) start fast and never start the compute daemon.
    """

    home: Path
    """$AUTORESEARCH_HOME of this session."""
    tracking: TrackingConfig
    """Where MLflow runs live."""
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES
    """Every skill output is cut to fit in this many bytes of JSON."""
    client_factory: Callable[[], Client] | None = None
    """Makes the compute client; default `compute.Client(home=home)` (starts the daemon if absent)."""
    _client: Client | None = field(default=None, init=False, repr=False)
    _tracker: Tracker | None = field(default=None, init=False, repr=False)

    @classmethod
    def create(
        cls,
        home: str | os.PathLike[str] | None = None,
        tracking_uri: str | None = None,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        client_factory: Callable[[], Client] | None = None,
    ) -> SkillContext:
        """A context for `home` (default $AUTORESEARCH_HOME) and a tracking URI or shorthand."""
        root = resolve_home(home)
        blocking = next((p for p in (root, *root.parents) if p.exists()), None)
        if blocking is not None and not blocking.is_dir():
            where = "is a file" if blocking == root else f"is under {blocking}, a file"
            raise ValueError(f"home {str(root)!r} {where}, not a folder: pass --home a folder (it is created if "
                             "absent), or unset it for $AUTORESEARCH_HOME or ~/.autoresearch")
        if max_output_bytes < 1000:
            raise ValueError(f"max_output_bytes {max_output_bytes} is too small: use at least 1000")
        return cls(root, resolve_tracking(tracking_uri, root), max_output_bytes, client_factory)

    @property
    def client(self) -> Client:
        """The compute client, made on first use."""
        if self._client is None:
            if self.client_factory is not None:
                self._client = self.client_factory()
            else:
                from compute import Client

                self._client = Client(home=self.home)
        return self._client

    @property
    def tracker(self) -> Tracker:
        """The tracker on `tracking`, made on first use."""
        if self._tracker is None:
            self._tracker = MlflowTracker(self.tracking)
        return self._tracker

    def close(self) -> None:
        """Close the compute client if one was made."""
        if self._client is not None:
            self._client.close()
            self._client = None
