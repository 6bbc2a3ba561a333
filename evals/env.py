"""The scratch world an eval runs in: its own AUTORESEARCH_HOME with a compute daemon
(virtual GPU slots, 1 s grace) and a local MLflow store, torn down afterwards."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from types import TracebackType

from compute import Client, DaemonConfig, start_daemon, stop_daemon
from tracking import mlflow_client, resolve_tracking

SLOTS = 4
"""Virtual GPU slots of the eval daemon: the most trials any eval runs at once."""
DAEMON = DaemonConfig(gpus=SLOTS, grace_s=1.0, min_runtime_s=0.2, tick_s=0.2)
"""Grace and minimum runtime short enough for second-long jobs (the latency benchmark knows them)."""


class EvalEnv:
    """`with EvalEnv(folder) as env:` a daemon on `folder/home`, `env.client`, `env.tracking_uri`."""

    def __init__(self, folder: Path) -> None:
        self.home = folder / "home"
        self.tracking = resolve_tracking(str(self.home / "mlflow.db"))
        self.tracking_uri = self.tracking.tracking_uri
        self.client: Client | None = None
        self._saved_home: str | None = None

    def __enter__(self) -> EvalEnv:
        self.home.mkdir(parents=True, exist_ok=True)
        self._saved_home = os.environ.get("AUTORESEARCH_HOME")
        os.environ["AUTORESEARCH_HOME"] = str(self.home)  # child runners and skills find the same home
        start_daemon(self.home, DAEMON)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            mlflow_client(self.tracking).search_experiments()  # the schema, once
        self.client = Client(self.home, autostart=False)
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self.client is not None:
            self.client.close()
        stop_daemon(self.home, stop_jobs=True, wait_s=60)
        if self._saved_home is None:
            os.environ.pop("AUTORESEARCH_HOME", None)
        else:
            os.environ["AUTORESEARCH_HOME"] = self._saved_home
