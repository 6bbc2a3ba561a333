"""Campaigns on the synthetic job, run against the test's compute daemon and the session's
MLflow store, with a runner that polls fast."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from autoresearch.campaign import Campaign, Ledger
from autoresearch.runner import RunnerSettings
from compute import Client
from tracking import TrackingConfig

REPO = Path(__file__).resolve().parents[3]
SYNTHETIC = REPO / "examples" / "synthetic"
FAST = RunnerSettings(poll_s=0.2, heartbeat_s=1.0, wait_for_tracking=True)
"""Polls fast; returns once MLflow has every write (the tests read it right after a run)."""


def synthetic_config(tracking: TrackingConfig, *, steps: int = 5, step_seconds: float = 0.02,
                     extra: tuple[str, ...] = ("--no-mlflow",), **overrides: Any) -> dict[str, Any]:
    """A Branin campaign on examples/synthetic/job.py, as the dict a campaign.yaml holds."""
    data: dict[str, Any] = {
        "name": f"branin-{uuid.uuid4().hex[:8]}",
        "command": ["python", "job.py", "--function", "branin", "--x1", "{x1}", "--x2", "{x2}",
                    "--steps", str(steps), "--step-seconds", str(step_seconds), *extra],
        "cwd": str(SYNTHETIC),
        "objective": {"metric": "objective", "mode": "min"},
        "search_space": {"x1": {"type": "float", "low": -5.0, "high": 10.0},
                         "x2": {"type": "float", "low": 0.0, "high": 15.0}},
        "budget": {"max_trials": 4, "max_parallel": 2},
        "policy": {"kind": "optuna", "seed": 1, "pruner": "none"},
        "tracking": {"uri": tracking.tracking_uri},
    }  # fmt: skip
    for key, value in overrides.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) and key in data else value
    return data


def write_config(folder: Path, data: dict[str, Any]) -> Path:
    path = folder / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def campaign_of(data: dict[str, Any]) -> Campaign:
    return Campaign.model_validate(data, context={"base_dir": SYNTHETIC})


def campaign_jobs(client: Client, name: str) -> list:
    return client.list(labels={"campaign": name}, limit=1000)


def wait_until(predicate: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Background:
    """A runner call on a thread: `.result` or `.error` once `.join()` returns."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            self.result = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            self.error = exc

    @property
    def done(self) -> bool:
        """Whether the call returned (or raised)."""
        return not self._thread.is_alive()

    def join(self, timeout: float = 120.0) -> Any:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the runner did not finish in time"
        if self.error:
            raise self.error
        return self.result


def ledger_of(name: str) -> Ledger:
    return Ledger.load(name)

