"""`python -m tracking.outbox_writer OUTBOX.db TRACKING_URI [LOCK_FD]`: the detached writer a runner
leaves behind (`tracking.outbox.spawn_writer`). It applies every pending write of the outbox, then
exits; with `LOCK_FD` it goes on with the writer lock its parent took for it. The MLflow client
is made only if a write needs it (a local SQLite store takes the outbox's writes in one
transaction without it)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from compute.isolation import seal_process
from tracking.config import resolve_tracking
from tracking.mlflow_tracker import MlflowTracker
from tracking.outbox import Outbox, drain_outbox, writer_turn


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) not in (2, 3):
        print("usage: python -m tracking.outbox_writer OUTBOX.db TRACKING_URI [LOCK_FD]", file=sys.stderr)
        return 2
    seal_process()  # it may hold the tracking server's credentials (compute/isolation.py)
    outbox = Outbox(Path(args[0]))
    try:
        with writer_turn(outbox, held_fd=int(args[2]) if len(args) == 3 else None):
            if not outbox.pending():
                return 0
            tracker = MlflowTracker(resolve_tracking(args[1]), lazy=True)
            applied = drain_outbox(outbox, tracker, lambda line: print(line, file=sys.stderr, flush=True))
            print(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} applied {applied} writes from {args[0]}", flush=True)
    finally:
        outbox.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
