"""What every backend must do, written once and run on each backend (like optuna's testing suites).

Two suites, each a class a test module subclasses, with the fixtures below (parametrized over
the backends) provided by it or its conftest:

- The protocol contract (`BackendProtocolSuite`), fixture `backend_harness` -> a `BackendHarness`:
  the Backend methods called directly (nodes, launch, poll, signal, adopt after a restart,
  release). Runs on every backend, in-memory `FakeBackend` included.
- The daemon contract (`BackendDaemonSuite`), fixtures `start` (factory: a daemon on the backend
  under test whose one node has 2 GPU slots -> Client), `backend` (its name) and `tmp_path`:
  real processes and signals end to end: exit codes, the attempt's environment and log,
  SIGTERM -> checkpoint -> requeue -> resume on preemption, cancel (SIGTERM, then SIGKILL
  after the grace), time limits, a silent attempt stopped as hung by `progress_timeout_s`
  and requeued, `down --stop-jobs`, processes that left the attempt's process group (`setsid`, a
  daemonized child) stopped with it on cancel and preemption before its GPUs go to another job,
  and a daemon restart that adopts running
  attempts and settles one that ended while no daemon watched. Runs on backends that run
  real commands (local, ray).
"""

from __future__ import annotations

import json
import math
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from compute.backends.base import AttemptExit, Backend, LaunchRequest
from compute.control import daemon_info, start_daemon, stop_daemon
from compute.daemon_config import DaemonConfig
from compute.spec import JobSpec
from compute.states import AttemptOutcome, FailureClass, JobState
from compute.testing.fake import FakeBackend, FakeRun
from compute.testing.jobs import (
    alive_job, counter_job, env_job, escaping_job, gate_job, live_pids, log_text, quick_job, wait_state, wait_until,
)

__all__ = ["BackendDaemonSuite", "BackendHarness", "BackendProtocolSuite", "FakeHarness", "ShellHarness"]


class BackendHarness(Protocol):
    """How the protocol suite drives one backend.

    `request` builds a launch request whose attempt prints `lines` (one per line) to its log,
    then exits with `exit_code`, or, with `forever`, keeps running until it is signalled
    (default signal dispositions). `restart` closes the current backend (attempts keep
    running) and returns a new one on the same host state, as a daemon restart does.
    """

    backend: Backend

    def request(self, key: str, *, lines: tuple[str, ...] = (), exit_code: int = 0,
                forever: bool = False) -> LaunchRequest: ...

    def restart(self) -> Backend: ...


class ShellHarness:
    """A harness for backends that run real commands: the attempt is a `sh -c` script."""

    def __init__(self, backend: Backend, workdir: Path, reopen: Callable[[], Backend]) -> None:
        self.backend = backend
        self.workdir = workdir
        self._reopen = reopen
        """() -> a new backend on the same state (called after `close`)."""

    def request(self, key: str, *, lines: tuple[str, ...] = (), exit_code: int = 0,
                forever: bool = False) -> LaunchRequest:
        script = "".join(f"echo {json.dumps(line)}; " for line in lines)
        script += "while :; do sleep 0.05; done" if forever else f"exit {exit_code}"
        node = self.backend.nodes()[0]
        return LaunchRequest(key=key, argv=["sh", "-c", script], env={}, cwd=str(self.workdir), node=node.name,
                             gpus=tuple(node.gpus[:1]), log_path=self.workdir / "logs" / f"{key}.log")

    def restart(self) -> Backend:
        self.backend.close()
        self.backend = self._reopen()
        return self.backend


class FakeHarness:
    """A harness for `FakeBackend`: each request scripts its attempt with `expect`."""

    def __init__(self, backend: FakeBackend, workdir: Path) -> None:
        self.backend = backend
        self.workdir = workdir

    def request(self, key: str, *, lines: tuple[str, ...] = (), exit_code: int = 0,
                forever: bool = False) -> LaunchRequest:
        run = FakeRun(exit_code=exit_code, lines=lines, duration_s=math.inf if forever else 0.0)
        self.backend.expect(key, run)
        node = self.backend.nodes()[0]
        return LaunchRequest(key=key, argv=["fake"], env={}, cwd=str(self.workdir), node=node.name,
                             gpus=tuple(node.gpus[:1]), log_path=self.workdir / "logs" / f"{key}.log")

    def restart(self) -> Backend:
        """A new FakeBackend on the same FakeHost (the attempts outlive the backend)."""
        self.backend.close()
        self.backend = FakeBackend(self.backend.nodes(), host=self.backend.host)
        return self.backend


def _wait_exit(backend: Backend, key: str, what: str) -> AttemptExit:
    return wait_until(lambda: backend.poll(key), what=what)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


STEPS = 40
BOTH = {"gpus": 2}


def _wait_started(client, job_id: str) -> None:
    """Until the job's command itself runs (it printed its first line)."""
    wait_until(lambda: _log(client, job_id).strip(), what=f"{job_id} output")


def _log(client, job_id: str) -> str:
    """The latest attempt's log so far ('' before the attempt or its log exists)."""
    if not client.get(job_id).attempts:
        return ""
    try:
        return log_text(client, job_id)
    except FileNotFoundError:
        return ""


def _daemon_config(client) -> DaemonConfig:
    """The running daemon's settings, to start the next one alike."""
    info = daemon_info(client.paths)
    assert info is not None, f"no daemon runs for {client.home}"
    return DaemonConfig.model_validate(info["config"])


class BackendProtocolSuite:
    """The Backend protocol's contract, its methods called directly, on the `backend_harness` fixture."""

    def test_nodes_offer_gpu_slots(self, backend_harness: BackendHarness) -> None:
        nodes = backend_harness.backend.nodes()
        assert nodes, "a backend offers at least one node"
        assert len({n.name for n in nodes}) == len(nodes), f"node names repeat: {[n.name for n in nodes]}"
        assert all(n.gpus and len(set(n.gpus)) == len(n.gpus) for n in nodes)
        assert isinstance(backend_harness.backend.name, str) and backend_harness.backend.name

    def test_exit_codes_and_log_lines(self, backend_harness: BackendHarness) -> None:
        backend = backend_harness.backend
        ok = backend_harness.request("suite-ok.1", lines=("hello", "second line"))
        bad = backend_harness.request("suite-bad.1", lines=("ValueError: bad",), exit_code=7)
        handles = [backend.launch(ok), backend.launch(bad)]
        assert all(json.loads(json.dumps(h)) == h for h in handles), f"handles must be JSON-able: {handles}"
        assert _wait_exit(backend, ok.key, "the ok attempt to end") == AttemptExit(0)
        assert _wait_exit(backend, bad.key, "the failing attempt to end") == AttemptExit(7)
        assert ok.log_path.read_text() == "hello\nsecond line\n"
        assert "ValueError: bad" in bad.log_path.read_text()
        for key in (ok.key, bad.key):
            backend.release(key)

    def test_signal_ends_a_running_attempt(self, backend_harness: BackendHarness) -> None:
        backend = backend_harness.backend
        request = backend_harness.request("suite-term.1", lines=("ready",), forever=True)
        backend.launch(request)
        wait_until(lambda: "ready" in _read(request.log_path), what="the attempt to start")
        assert backend.poll(request.key) is None, "a running attempt polls as None"
        backend.signal(request.key, signal.SIGTERM)
        assert _wait_exit(backend, request.key, "SIGTERM to end the attempt") == AttemptExit(-signal.SIGTERM)
        backend.release(request.key)

    def test_signal_when_gone_is_no_error(self, backend_harness: BackendHarness) -> None:
        backend = backend_harness.backend
        request = backend_harness.request("suite-gone.1")
        backend.launch(request)
        assert _wait_exit(backend, request.key, "the attempt to end") == AttemptExit(0)
        backend.signal(request.key, signal.SIGTERM)
        backend.signal(request.key, signal.SIGKILL)
        assert backend.poll(request.key) == AttemptExit(0), "a signal after the end does not change how it ended"
        backend.release(request.key)
        backend.signal(request.key, signal.SIGTERM)  # released: still no error

    def test_a_restarted_backend_adopts_by_key(self, backend_harness: BackendHarness) -> None:
        backend = backend_harness.backend
        running = backend_harness.request("suite-live.1", lines=("up",), forever=True)
        ended = backend_harness.request("suite-done.1", exit_code=3)
        handles = {running.key: backend.launch(running), ended.key: backend.launch(ended)}
        wait_until(lambda: "up" in _read(running.log_path), what="the long attempt to start")
        assert _wait_exit(backend, ended.key, "the short attempt to end") == AttemptExit(3)
        backend = backend_harness.restart()
        assert backend.adopt(running.key, handles[running.key]) is None, "a running attempt is adopted"
        assert backend.adopt(ended.key, None) == AttemptExit(3), "an ended attempt's exit code survives the restart"
        backend.signal(running.key, signal.SIGTERM)
        assert _wait_exit(backend, running.key, "SIGTERM to end the adopted attempt") == AttemptExit(-signal.SIGTERM)
        for key in handles:
            backend.release(key)


class BackendDaemonSuite:
    """The daemon's contract on a backend that runs real commands, on the `start` and `backend` fixtures."""

    def test_exit_codes_and_log_excerpts(self, start):
        client = start()
        ok = client.submit(JobSpec(argv=["sh", "-c", "echo hello from the job"]))
        bad = client.submit(JobSpec(argv=["sh", "-c", "echo 'ValueError: bad learning rate' >&2; exit 7"]))
        missing = client.submit(JobSpec(argv=["no-such-program-3f9a"]))
        ok_done, bad_done, missing_done = client.wait([ok.id, bad.id, missing.id], timeout=90)
        assert (ok_done.state, ok_done.attempts[0].exit_code) == (JobState.succeeded, 0)
        assert log_text(client, ok.id) == "hello from the job\n"
        assert (bad_done.state, bad_done.attempts[0].exit_code) == (JobState.failed, 7)
        assert "ValueError: bad learning rate" in bad_done.attempts[0].log_excerpt
        assert (missing_done.state, missing_done.attempts[0].exit_code) == (JobState.failed, 127)
        assert "no-such-program-3f9a" in missing_done.attempts[0].log_excerpt
        assert "not found" in missing_done.attempts[0].log_excerpt
        rules = (bad_done.attempts[0].failure_rule, missing_done.attempts[0].failure_rule)
        assert rules == ("python_traceback", "command_not_found"), rules
        assert ok_done.attempts[0].failure_rule is None

    def test_attempt_environment_gpus_and_ids(self, start, backend):
        client = start()
        assert daemon_info(client.paths)["backend"] == backend
        job = client.submit(env_job(resources={"gpus": 2}, env={"EXTRA": "yes", "AR_JOB_ID": "spoofed"}))
        one = client.submit(env_job(resources={"gpus": 1}))
        done, one_done = client.wait([job.id, one.id], timeout=90)
        lines = dict(line.split("=", 1) for line in log_text(client, job.id).splitlines())
        assert lines == {
            "CUDA_VISIBLE_DEVICES": "0,1", "AR_JOB_ID": job.id, "AR_ATTEMPT": "1",
            "AR_CHECKPOINT_DIR": done.checkpoint_dir, "EXTRA": "yes",
        }
        assert done.attempts[0].gpus == [0, 1] and done.attempts[0].node == client.nodes()[0].name
        assert f"CUDA_VISIBLE_DEVICES={one_done.attempts[0].gpus[0]}\n" in log_text(client, one.id)

    def test_preemption_sigterm_checkpoint_requeue_resume(self, start):
        client = start()
        low = client.submit(counter_job(STEPS, 0.05, name="low", priority="low", resources=BOTH))
        wait_until(lambda: "step 5\n" in _log(client, low.id), what="low job progress")
        high = client.submit(quick_job(name="high", priority="high", resources=BOTH))
        high_done, low_done = client.wait([high.id, low.id], timeout=120)
        assert high_done.state == low_done.state == JobState.succeeded
        first, second = low_done.attempts
        assert (first.outcome, first.exit_code) == (AttemptOutcome.preempted, 0)  # it checkpointed and exited
        assert second.outcome == AttemptOutcome.succeeded and low_done.retries_used == 0
        assert high_done.attempts[0].started_at >= first.ended_at
        saved_at = int(log_text(client, low.id, 1).split("checkpointed at step ")[1].split()[0])
        resumed = log_text(client, low.id, 2)
        assert saved_at > 0 and f"resumed from step {saved_at}" in resumed
        assert f"result: {sum(range(STEPS))}" in resumed

    def test_cancel_sends_sigterm(self, start, tmp_path):
        client = start()
        job = client.submit(gate_job(tmp_path / "never", resources=BOTH))
        _wait_started(client, job.id)
        client.cancel(job.id, reason="wrong config")
        done = wait_state(client, job.id, JobState.cancelled)
        assert (done.attempts[0].outcome, done.attempts[0].exit_code) == (AttemptOutcome.cancelled, -signal.SIGTERM)

    def test_cancel_escalates_to_sigkill_after_the_grace(self, start):
        client = start()
        stubborn = JobSpec(argv=["sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"], grace_s=0.3)
        job = client.submit(stubborn)
        wait_until(lambda: "ready" in _log(client, job.id), what="stubborn job ready")
        client.cancel(job.id)
        done = wait_state(client, job.id, JobState.cancelled)
        assert done.attempts[0].exit_code == -signal.SIGKILL
        assert "killed" in [e.kind for e in client.events(job_id=job.id)]

    def test_time_limit(self, start):
        client = start()
        done = client.wait(client.submit(JobSpec(argv=["sleep", "60"], time_limit_s=0.5)).id, timeout=90)[0]
        assert done.state == JobState.failed and done.attempts[0].outcome == AttemptOutcome.timed_out

    def test_progress_timeout_stops_a_silent_attempt_as_hung_and_requeues_it(self, start):
        """Attempt 1 prints, then goes silent: stopped as hung (infra, rule hang) on the infra budget.
        Attempt 2 prints every 0.25 s for 6 s, longer than the timeout in all: never stopped, succeeds."""
        client = start()
        script = ('echo started; if [ "$AR_ATTEMPT" = 1 ]; then sleep 600; fi; '
                  'i=0; while [ $i -lt 24 ]; do i=$((i+1)); echo "step $i"; sleep 0.25; done')
        job = client.submit(JobSpec(argv=["sh", "-c", script], progress_timeout_s=4, grace_s=1))
        done = client.wait(job.id, timeout=90)[0]
        assert done.state == JobState.succeeded, done.state_reason
        hung, second = done.attempts
        assert (hung.outcome, hung.failure_class, hung.stop_reason) == (
            AttemptOutcome.infra_failed, FailureClass.infra, "hang")
        assert hung.exit_code == -signal.SIGTERM  # stopped like any other stop: SIGTERM to its process group
        assert "infra failure (rule hang)" in (hung.log_excerpt or ""), hung.log_excerpt
        assert "[autoresearch] stopped as hung: no log output for" in log_text(client, job.id, 1)
        assert second.outcome == AttemptOutcome.succeeded and "step 24" in log_text(client, job.id, 2)
        assert (done.retries_used, done.infra_retries_used) == (0, 1)
        events = client.events(job_id=job.id)
        assert [e.kind for e in events] == ["submitted", "started", "stop_requested", "requeued", "started", "succeeded"]
        stop, requeued = (next(e.reason for e in events if e.kind == kind) for kind in ("stop_requested", "requeued"))
        assert stop.startswith("no log output for 4 s (progress_timeout_s=4); stopped as hung; SIGTERM")
        assert "no log output for 4 s (progress_timeout_s=4); stopped as hung; requeued" in requeued

    def test_down_with_stop_jobs_requeues(self, start, tmp_path):
        client = start()
        job = client.submit(gate_job(tmp_path / "never", resources=BOTH))
        _wait_started(client, job.id)
        stop_daemon(client.home, stop_jobs=True)
        requeued = client.get(job.id)
        assert requeued.state == JobState.pending and requeued.attempts[0].outcome == AttemptOutcome.preempted

    def test_a_restarted_daemon_adopts_running_attempts_and_settles_ended_ones(self, start, tmp_path):
        client = start()
        config = _daemon_config(client)
        gate, finish = tmp_path / "open", tmp_path / "finish"
        survivor = client.submit(gate_job(gate, name="survivor", resources={"gpus": 1}))
        script = f'echo up; while [ ! -e "{finish}" ]; do sleep 0.05; done; echo bye; exit 3'
        finisher = client.submit(JobSpec(argv=["sh", "-c", script], name="finisher", resources={"gpus": 1}, max_retries=0))
        for job in (survivor, finisher):
            _wait_started(client, job.id)
        stop_daemon(client.home)  # attempts keep running
        finish.touch()  # ends while no daemon watches: its exit code must not be lost
        wait_until(lambda: "bye" in _log(client, finisher.id), what="the finisher to end")
        start_daemon(client.home, config)
        adopted = lambda: "adopted" in [e.kind for e in client.events(job_id=survivor.id)]  # noqa: E731
        wait_until(adopted, what="the survivor's adoption")  # before it ends: an ended one is settled, not adopted
        gate.touch()
        survivor_done, finisher_done = client.wait([survivor.id, finisher.id], timeout=90)
        assert survivor_done.state == JobState.succeeded and len(survivor_done.attempts) == 1
        assert (len(finisher_done.attempts), finisher_done.attempts[0].exit_code) == (1, 3)
        assert finisher_done.state == JobState.failed

    def test_cancel_and_preemption_stop_processes_that_left_the_attempt(self, start, tmp_path):
        """An attempt that started a `setsid` child and a daemonized grandchild (both ignoring SIGTERM)
        is cancelled, then another is preempted: each time every one of its processes is gone before
        the attempt ends, and the next job, on the same GPUs, finds none of them running."""
        client = start()
        cancelled_pids, preempted_pids = tmp_path / "cancelled", tmp_path / "preempted"
        job = client.submit(escaping_job(cancelled_pids, resources=BOTH, grace_s=60))
        wait_until(lambda: "ready" in _log(client, job.id), what="the escaping job to start its escapees")
        after = client.submit(alive_job(cancelled_pids, resources=BOTH))
        client.cancel(job.id)
        wait_state(client, job.id, JobState.cancelled)
        assert live_pids(cancelled_pids) == [], "cancelled: processes of the attempt still run"
        assert client.wait(after.id, timeout=90)[0].state == JobState.succeeded
        assert log_text(client, after.id) == "checked\n", "the next job got the GPUs while they ran"

        low = client.submit(escaping_job(preempted_pids, priority="low", resources=BOTH, grace_s=60))
        wait_until(lambda: "ready" in _log(client, low.id), what="the low job to start its escapees")
        high = client.submit(alive_job(preempted_pids, priority="high", resources=BOTH))
        high_done, low_done = client.wait([high.id, low.id], timeout=120)
        assert low_done.attempts[0].outcome == AttemptOutcome.preempted
        assert live_pids(preempted_pids) == [], "preempted: processes of the attempt still run"
        assert log_text(client, high.id) == "checked\n", "the preempting job got the GPUs while they ran"
