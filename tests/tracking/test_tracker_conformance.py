"""The `Tracker` conformance suite against MLflow (the session's real SQLite store) and in memory."""

from __future__ import annotations

import pytest

from tracking import InMemoryTracker, MlflowTracker, Tracker, TrackingConfig
from tracking.testing import TrackerSuite


class TestMlflowTracker(TrackerSuite):
    @pytest.fixture
    def tracker(self, tracking: TrackingConfig) -> Tracker:
        return MlflowTracker(tracking)


class TestInMemoryTracker(TrackerSuite):
    @pytest.fixture
    def tracker(self) -> Tracker:
        return InMemoryTracker()
