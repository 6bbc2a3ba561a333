"""A skill context on the test's compute daemon and the session's MLflow store."""

from __future__ import annotations

import pytest

from compute import Client
from skills import SkillContext
from tracking import TrackingConfig


@pytest.fixture
def ctx(compute_client: Client, tracking: TrackingConfig) -> SkillContext:
    return SkillContext(home=compute_client.home, tracking=tracking, client_factory=lambda: compute_client)
