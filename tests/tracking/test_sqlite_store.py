"""A new home's MLflow store survives a SIGKILL during its first schema creation (issue 20
item 6): the schema is built in a temporary file and renamed into place, so the next process
finds either no store (and makes it) or a whole one, never `table spans already exists`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tracking import MlflowTracker, TrackingConfig

REPO = Path(__file__).resolve().parents[2]


def test_a_creator_killed_mid_schema_leaves_a_usable_home(tmp_path: Path) -> None:
    db = tmp_path / "home" / "mlflow.db"
    code = ("from pathlib import Path; from tracking import MlflowTracker, TrackingConfig; "
            f"MlflowTracker(TrackingConfig(tracking_uri='sqlite:///{db}')).experiment('x')")  # fmt: skip
    creator = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        while not list(db.parent.glob(".mlflow.db.creating-*")):  # the schema is being made
            assert creator.poll() is None, "the creator ended before it started the schema"
            time.sleep(0.01)
        os.kill(creator.pid, signal.SIGKILL)
    finally:
        creator.wait()
    assert not db.exists()  # nothing half-made in place

    tracker = MlflowTracker(TrackingConfig(tracking_uri=f"sqlite:///{db}"))
    run = tracker.create_run(tracker.experiment("after-the-kill"), name="r")
    assert tracker.get_run(run).name == "r"
    assert not list(db.parent.glob(".mlflow.db.creating-*"))
