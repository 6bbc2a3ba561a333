"""The backend suites (compute/testing/backend_suite.py) on each backend.

Protocol tests (`backend_harness`): local, ray, and the in-memory FakeBackend. Daemon tests
(`start`, `backend`): local and ray, whose attempts are real commands. The fixtures, parametrized
over the backends, are in conftest.py.
"""

from compute.testing.backend_suite import BackendDaemonSuite, BackendProtocolSuite


class TestBackendProtocol(BackendProtocolSuite):
    pass


class TestBackendDaemon(BackendDaemonSuite):
    pass
