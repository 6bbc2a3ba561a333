"""How the daemon runs a gang attempt: one backend attempt per member, watched as one.

A member is launched under the key `<job id>.<attempt>.r<rank>`, so the `Backend` protocol
is unchanged. The attempt's handle holds every member's handle (`members`) and, once one is
to blame for the attempt's end, its rank (`blame`): the first member that exited non-zero, or
the member on a node that was quarantined. The daemon then stops the others (SIGTERM, grace,
SIGKILL), and when all have exited ends the attempt as the blamed member did.

A member's exit is read from the backend once and kept here until the attempt is released:
a reaped process group is never signalled or polled again (its id may be reused).
"""

from __future__ import annotations

import signal
from typing import Any

from compute.backends.base import AttemptExit, Backend, LaunchRequest
from compute.lifecycle import LiveAttempt, Member


class GangWatch:
    """The members' exits seen so far, per backend key."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.exits: dict[str, AttemptExit] = {}
        self.tracked: set[str] = set()
        """Member keys the backend watches for this daemon (launched or adopted)."""

    def poll(self, attempt: LiveAttempt) -> list[AttemptExit | None]:
        """Each member's exit (None while it runs); adopts members this daemon did not launch."""
        handles = (attempt.handle or {}).get("members") or []
        out: list[AttemptExit | None] = []
        for rank, key in enumerate(attempt.member_keys()):
            if key not in self.exits:
                if key in self.tracked:
                    ended = self.backend.poll(key)
                else:
                    ended = self.backend.adopt(key, handles[rank] if rank < len(handles) else None)
                    self.tracked.add(key)
                if ended is not None:
                    self.exits[key] = ended
            out.append(self.exits.get(key))
        return out

    def blame(self, attempt: LiveAttempt) -> Member | None:
        """The member the attempt's end is blamed on: recorded in the handle, else the first
        (lowest rank) member seen exiting non-zero or lost; None while none failed."""
        recorded = (attempt.handle or {}).get("blame")
        if recorded is not None:
            return attempt.members[recorded]
        for member, key in zip(attempt.members, attempt.member_keys()):
            ended = self.exits.get(key)
            if ended is not None and ended.exit_code != 0:
                return member
        return None

    def ended(self, attempt: LiveAttempt) -> tuple[AttemptExit, Member]:
        """How the whole attempt ended (all members have exited): as its blamed member did, else 0.
        A member blamed for a failed gang preflight failed, even if its argv then exited 0."""
        member = self.blame(attempt) or attempt.members[0]
        ended = self.exits[attempt.member_keys()[member.rank]]
        if (attempt.handle or {}).get("preflight") == "failed" and ended.exit_code == 0:
            ended = AttemptExit(1)
        return ended, member

    def signal(self, attempt: LiveAttempt, signum: int, rank: int | None = None) -> None:
        """Signal every member still running (or only `rank`)."""
        for member, key in zip(attempt.members, attempt.member_keys()):
            if key not in self.exits and (rank is None or member.rank == rank):
                self.backend.signal(key, signum)

    def launch(self, requests: list[LaunchRequest]) -> dict[str, Any]:
        """Start every member; if one cannot start, kill those started and re-raise."""
        handles: list[dict[str, Any]] = []
        try:
            for request in requests:
                handles.append(self.backend.launch(request))
                self.tracked.add(request.key)
        except Exception:
            for request in requests[: len(handles)]:
                self.backend.signal(request.key, signal.SIGKILL)
            raise
        return {"members": handles, "pid": handles[0].get("pid")}

    def release(self, attempt: LiveAttempt) -> None:
        for key in attempt.member_keys():
            self.exits.pop(key, None)
            self.tracked.discard(key)
            self.backend.release(key)
