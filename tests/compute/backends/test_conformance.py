"""The backend suite (compute/testing/backend_suite.py) on each backend.

Protocol tests (`backend_harness`): local, ray, and the in-memory FakeBackend. Daemon tests
(`start`, `backend`): local and ray, whose attempts are real commands.
"""

from compute.testing.backend_suite import *  # noqa: F403  (the suite's test functions)
