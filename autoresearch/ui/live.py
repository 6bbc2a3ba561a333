"""Live updates: a version that moves whenever the compute store or a campaign's files change,
and the appended text of a job's log. The pages' script re-fetches what it shows when the
version moves (server-sent events, `/live`), and appends log text as it comes (`/jobs/ID/log`)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio

from compute import Client
from autoresearch.ui.fleet import log_path, read_from

POLL_S = 0.25
"""How often the server looks for changes (a page shows a change within about this long)."""


class ChangeFeed:
    """A counter that moves when anything the pages show may have changed (shared by all streams)."""

    def __init__(self, client: Client, home: Path | None) -> None:
        self._client = client
        self._home = home
        self._lock = threading.Lock()
        self._seen: tuple[int, tuple[tuple[str, int, int], ...]] | None = None
        self._checked = 0.0
        self.version = 0

    def _campaign_files(self) -> tuple[tuple[str, int, int], ...]:
        from autoresearch.campaign import campaigns_root

        root = campaigns_root(self._home)
        found = []
        for path in sorted(root.glob("*/*.db*")) if root.is_dir() else []:
            try:
                stat = path.stat()
            except OSError:
                continue
            found.append((str(path), stat.st_mtime_ns, stat.st_size))
        return tuple(found)

    def current(self) -> int:
        """The version now (looks at the store and the campaigns at most once per POLL_S)."""
        with self._lock:
            now = time.monotonic()
            if now - self._checked >= POLL_S:
                self._checked = now
                seen = (self._client.data_version(), self._campaign_files())
                if seen != self._seen:
                    self._seen = seen
                    self.version += 1
            return self.version


async def changes(feed: ChangeFeed) -> AsyncIterator[dict[str, str]]:
    """Server-sent events: `change` with the version, each time it moves."""
    last = await anyio.to_thread.run_sync(feed.current)
    yield {"event": "hello", "data": str(last)}
    while True:
        await anyio.sleep(POLL_S)
        version = await anyio.to_thread.run_sync(feed.current)
        if version != last:
            last = version
            yield {"event": "change", "data": str(version)}


async def follow_log(client: Client, job_id: str, offset: int) -> AsyncIterator[dict[str, str]]:
    """Server-sent events of a job's log: `append` (new text) and `reset` (a new attempt's log)."""
    current: Path | None = None

    def look() -> tuple[str, str, int]:
        nonlocal current, offset
        path = log_path(client, client.get(job_id))
        if path is None:
            return "", "", offset
        if current is not None and path != current:
            offset = -1  # a new attempt's log: start over on its tail
        current = path
        text, offset, reset = read_from(path, offset)
        return ("reset" if reset else "append" if text else ""), text, offset

    while True:
        kind, text, _ = await anyio.to_thread.run_sync(look)
        if kind:
            yield {"event": kind, "data": json.dumps(text)}
        await anyio.sleep(POLL_S)
