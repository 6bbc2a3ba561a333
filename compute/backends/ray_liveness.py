"""Node loss in seconds: the Ray backend's own heartbeat on its node agents.

Ray declares a node dead only after its GCS health checks time out (~13 s by default);
meanwhile `ray.nodes()` lists it alive, work could be placed there, and an attempt lost
there would wait to be noticed. So the backend's watcher thread pings each node's agent
(`NodeAgent.ping`) every `BEAT_S`, one ping in flight per agent:

- *suspect*: the agent answered before and has not answered for `LATE_S` since (its oldest
  unanswered ping; an agent still starting is not suspect). The daemon gives the node no new
  work until the agent answers again (`SuspectsNodes`: the node keeps its row and its state).
- *lost*: a suspect node whose agent is known dead (a ping failed: the actor died), whose
  raylet refuses TCP connections (its process is gone while the host still answers: a
  SIGKILLed raylet takes its workers, our agent among them, with it), or that has not
  answered for `LOST_S` (the host itself is gone). The backend settles the node's attempts
  as lost at once (the daemon requeues them elsewhere without spending retries; a job that
  checkpointed resumes from `AR_CHECKPOINT_DIR`), and keeps the node out until Ray drops it.

The checks need no new transport: a Ray actor call, and a TCP connect to the raylet's own
port as Ray lists it.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

from ray.exceptions import ActorUnavailableError

BEAT_S = 0.25
"""How often each agent is pinged (when no ping to it is in flight)."""
LATE_S = 1.0
"""An agent silent this long makes its node suspect: no new work goes there."""
LOST_S = 5.0
"""A suspect node silent this long is lost even if its raylet's port still accepts connections."""
_CONNECT_S = 0.5


class AgentBeats:
    """Which nodes' agents answer (see the module docstring). `beat` is called from one thread;
    ping answers arrive in Ray's threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight: dict[str, Future[Any]] = {}
        """Ray node id -> its agent's ping not answered yet."""
        self._silent_since: dict[str, float] = {}
        """Ray node id -> when the oldest ping its agent has not answered was sent."""
        self._dead: set[str] = set()
        """Ray node ids whose agent's ping failed for good (the actor died)."""
        self._up: set[str] = set()
        """Ray node ids whose agent answered a ping (it started): only those can fall silent."""

    def beat(self, agents: Mapping[str, Any], raylets: Mapping[str, tuple[str, int]]) -> tuple[set[str], set[str]]:
        """Ping the agents with no ping in flight; (suspect, lost) Ray node ids among `agents`.

        `raylets`: Ray node id -> (address, port) of its raylet, as `ray.nodes()` lists it."""
        now = time.monotonic()
        suspect: set[str] = set()
        lost: set[str] = set()
        for node_id, agent in agents.items():
            with self._lock:
                dead = node_id in self._dead
                since = self._silent_since.setdefault(node_id, now) if node_id in self._up else now
                send = not dead and node_id not in self._in_flight
            if send:
                future = agent.ping.remote().future()
                with self._lock:
                    self._in_flight[node_id] = future
                future.add_done_callback(lambda f, n=node_id: self._answered(n, f))
            if dead or now - since >= LATE_S:
                suspect.add(node_id)
                if dead or now - since >= LOST_S or _refused(raylets.get(node_id)):
                    lost.add(node_id)
        return suspect, lost

    def _answered(self, node_id: str, future: Future[Any]) -> None:
        err = future.exception()
        with self._lock:
            if self._in_flight.get(node_id) is future:
                del self._in_flight[node_id]
            if err is None:
                self._silent_since.pop(node_id, None)
                self._up.add(node_id)
            elif not isinstance(err, ActorUnavailableError):  # unavailable: ask again; anything else: dead
                self._dead.add(node_id)

    def forget(self, node_id: str) -> None:
        """Its agent was replaced or its node left: start afresh with the next agent there."""
        with self._lock:
            self._in_flight.pop(node_id, None)
            self._silent_since.pop(node_id, None)
            self._dead.discard(node_id)
            self._up.discard(node_id)


def _refused(raylet: tuple[str, int] | None) -> bool:
    """Whether the raylet's port refuses connections (its process is gone); False when unknown or unsure."""
    if raylet is None or not raylet[1]:
        return False
    try:
        with socket.create_connection(raylet, timeout=_CONNECT_S):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:  # a timeout or an unreachable network says nothing sure
        return False
