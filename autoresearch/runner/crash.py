"""Crash points for resume drills: `AUTORESEARCH_CRASH_AT=launch.submitted:3` makes the runner
SIGKILL itself the 3rd time it passes that point (no cleanup, like a power cut).

Points: propose.confirmed (a confirmation admitted, the round's others not yet), propose.asked
(policy proposed, not yet admitted), launch.submitted (job submitted,
trial not yet marked launched), evaluate.ended (a trial ended, its run not yet closed),
replan.start, holdout.submitted (the leaders' holdout jobs submitted, none recorded yet).
"""

from __future__ import annotations

import os
import signal

ENV = "AUTORESEARCH_CRASH_AT"
_hits: dict[str, int] = {}


def crash_point(name: str) -> None:
    """SIGKILL this process if `$AUTORESEARCH_CRASH_AT` names this point and its count is reached."""
    wanted = os.environ.get(ENV)
    if not wanted:
        return
    point, _, count = wanted.partition(":")
    if point != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] >= int(count or 1):
        os.kill(os.getpid(), signal.SIGKILL)
