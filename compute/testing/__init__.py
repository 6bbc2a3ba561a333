"""Test kits shipped with compute, the way optuna ships `optuna/testing/`.

- `FakeBackend` (compute/testing/fake.py): a real Backend that runs attempts in memory,
  with scripted exit codes, durations and log lines, for scheduler and daemon tests.
- `compute.testing.backend_suite`: what every Backend must do (`BackendProtocolSuite`,
  `BackendDaemonSuite`); `compute.testing.probe_suite`: what every HealthProbe must do
  (`ProbeSuite`). Subclass a suite in a test module and provide the fixtures it names,
  parametrized over the implementations (see each module's docstring).
- `compute.testing.jobs`: real jobs (gate, env, counter) and waits on them, without timings.

Importing this package stays light: the suites are imported by name, not here.
"""

from compute.testing.fake import FOREVER, FakeBackend, FakeHost, FakeRun

__all__ = ["FOREVER", "FakeBackend", "FakeHost", "FakeRun"]
