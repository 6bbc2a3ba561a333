"""The `Tracker` conformance suite against MLflow (the session's real SQLite store) and in memory."""

from __future__ import annotations

import pytest

from tracking import InMemoryTracker, MlflowTracker, Tracker
from tracking.testing import TrackerSuite


class TestTracker(TrackerSuite):
    @pytest.fixture(params=["mlflow", "memory"])
    def tracker(self, request: pytest.FixtureRequest) -> Tracker:
        if request.param == "mlflow":
            return MlflowTracker(request.getfixturevalue("tracking"))
        return InMemoryTracker()
