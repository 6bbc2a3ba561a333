"""FakeBackend under the real daemon: the scheduler's decisions carried out without processes.

The Daemon runs in this process on a real store; each test drives it by `tick()` until the
jobs reach their states, and scripts the fake attempts (exit codes, log lines, a job that
ignores SIGTERM). This is how a user tests scheduling policies without starting commands.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from compute import AttemptOutcome, Client, ComputePaths, Daemon, DaemonConfig, JobSpec, JobState, Node
from compute.testing import FOREVER, FakeBackend, FakeRun
from compute.testing.jobs import wait_until


@pytest.fixture
def fake_daemon(tmp_path: Path) -> Iterator[tuple[Daemon, FakeBackend, Client]]:
    """A daemon (grace 0.2 s, no minimum runtime) on a FakeBackend with one 2-slot node, and a Client."""
    paths = ComputePaths.of(tmp_path / "home")
    fake = FakeBackend([Node(name="fake", gpus=[0, 1])])
    daemon = Daemon(paths, DaemonConfig(grace_s=0.2, min_runtime_s=0.0, tick_s=0.05), fake)
    daemon.start()
    client = Client(paths.home, autostart=False)
    yield daemon, fake, client
    client.close()
    daemon.store.close()


def _settle(daemon: Daemon, client: Client, job_id: str, state: JobState) -> None:
    def reached() -> bool:
        daemon.tick()
        return client.get(job_id).state == state

    wait_until(reached, what=f"{job_id} to be {state.value}")


def test_exit_codes_become_job_states_and_log_excerpts(fake_daemon):
    daemon, fake, client = fake_daemon
    ok = client.submit(JobSpec(argv=["train"], resources={"gpus": 1}))
    bad = client.submit(JobSpec(argv=["train"], resources={"gpus": 1}, max_retries=0))
    fake.expect(f"{ok.id}.1", FakeRun(lines=("epoch 1", "done")))
    fake.expect(f"{bad.id}.1", FakeRun(exit_code=7, lines=("ValueError: bad learning rate",)))
    _settle(daemon, client, ok.id, JobState.succeeded)
    _settle(daemon, client, bad.id, JobState.failed)
    assert client.log_path(ok.id).read_text() == "epoch 1\ndone\n"
    failed = client.get(bad.id).attempts[0]
    assert failed.exit_code == 7 and "ValueError: bad learning rate" in failed.log_excerpt
    launched = {r.key: r for r in fake.host.launched}
    assert launched[f"{ok.id}.1"].env["AR_JOB_ID"] == ok.id and launched[f"{ok.id}.1"].node == "fake"
    assert set(fake.host.released) == {f"{ok.id}.1", f"{bad.id}.1"}


def test_preemption_sends_sigterm_then_sigkill_to_a_job_that_ignores_it(fake_daemon):
    daemon, fake, client = fake_daemon
    low = client.submit(JobSpec(argv=["train"], priority="low", resources={"gpus": 2}))
    fake.expect(f"{low.id}.1", FakeRun(duration_s=FOREVER.duration_s, ignores=frozenset({signal.SIGTERM})))
    _settle(daemon, client, low.id, JobState.running)
    high = client.submit(JobSpec(argv=["eval"], priority="high", resources={"gpus": 2}))
    _settle(daemon, client, high.id, JobState.succeeded)
    first = client.get(low.id).attempts[0]
    assert (first.outcome, first.exit_code) == (AttemptOutcome.preempted, -signal.SIGKILL)
    assert [s for k, s in fake.host.signals if k == f"{low.id}.1"] == [signal.SIGTERM, signal.SIGKILL]
    _settle(daemon, client, low.id, JobState.succeeded)  # requeued, and its second attempt exits 0
    assert len(client.get(low.id).attempts) == 2


def test_a_new_daemon_on_the_same_host_adopts_the_running_attempt(fake_daemon, tmp_path):
    daemon, fake, client = fake_daemon
    job = client.submit(JobSpec(argv=["train"], resources={"gpus": 1}))
    fake.expect(f"{job.id}.1", FOREVER)
    _settle(daemon, client, job.id, JobState.running)
    fake.close()
    again = FakeBackend(fake.nodes(), host=fake.host)
    second = Daemon(daemon.paths, daemon.config, again)
    second.start()
    try:
        assert client.get(job.id).state == JobState.running
        client.cancel(job.id, reason="enough")
        _settle(second, client, job.id, JobState.cancelled)
        assert client.get(job.id).attempts[0].exit_code == -signal.SIGTERM
        assert "adopted" in [e.kind for e in client.events(job_id=job.id)]
    finally:
        second.store.close()
