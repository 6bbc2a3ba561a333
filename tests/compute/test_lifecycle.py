"""Attempt lifecycles with real processes and signals: preemption and resume, retries,
cancel, time limits, and a daemon killed with SIGKILL while jobs run."""

from __future__ import annotations

import os
import signal
import time

from compute import AttemptOutcome, DaemonConfig, JobSpec, JobState, start_daemon
from compute.control import daemon_pid
from tests.conftest import FAST_DAEMON
from tests.compute.helpers import (
    counter_job, gate_job, log_so_far, log_text, quick_job, wait_started, wait_state, wait_until,
)

STEPS = 40
EXPECTED = sum(range(STEPS))


def test_preempted_job_resumes_from_its_checkpoint_with_the_right_result(start_compute):
    client = start_compute(gpus=1)
    low = client.submit(counter_job(STEPS, 0.05, name="low", priority="low", resources={"gpus": 1}))
    wait_until(lambda: "step 5\n" in log_so_far(client, low.id), what="low job progress")
    high = client.submit(quick_job(name="high", priority="high", resources={"gpus": 1}))
    high_done, low_done = client.wait([high.id, low.id], timeout=90)

    assert high_done.state == JobState.succeeded
    assert low_done.state == JobState.succeeded
    first, second = low_done.attempts
    assert first.outcome == AttemptOutcome.preempted and first.exit_code == 0  # it checkpointed and exited
    assert second.outcome == AttemptOutcome.succeeded
    assert low_done.retries_used == 0
    assert high_done.attempts[0].started_at >= first.ended_at
    assert second.started_at >= high_done.attempts[0].ended_at
    resumed = log_text(client, low.id, 2)
    saved_at = int(log_text(client, low.id, 1).split("checkpointed at step ")[1].split()[0])
    assert saved_at > 0 and f"resumed from step {saved_at}" in resumed
    assert f"result: {EXPECTED}" in resumed
    kinds = [e.kind for e in client.events(job_id=low.id)]
    assert kinds == ["submitted", "started", "stop_requested", "requeued", "started", "succeeded"]


def test_user_failures_are_retried_with_growing_backoff(compute_client):
    spec = JobSpec(argv=["sh", "-c", 'test "$AR_ATTEMPT" -ge 3 || exit 3'], max_retries=3, retry_backoff_s=0.2)
    job = compute_client.wait(compute_client.submit(spec).id, timeout=60)[0]
    assert job.state == JobState.succeeded and job.retries_used == 2
    assert [a.outcome for a in job.attempts] == [AttemptOutcome.failed, AttemptOutcome.failed, AttemptOutcome.succeeded]
    assert [a.exit_code for a in job.attempts] == [3, 3, 0]
    gaps = [b.started_at - a.ended_at for a, b in zip(job.attempts, job.attempts[1:])]
    assert gaps[0] >= 0.2 * 0.5 and gaps[1] >= 0.4 * 0.5  # base * 2^k * jitter in [0.5, 1.5)
    reasons = [e.reason for e in compute_client.events(job_id=job.id) if e.kind == "requeued"]
    assert "retry 1 of 3" in reasons[0] and "retry 2 of 3" in reasons[1]


def test_failure_without_retries_left_fails_the_job_with_a_log_excerpt(compute_client):
    spec = JobSpec(argv=["sh", "-c", "echo 'ValueError: bad learning rate' >&2; exit 7"], max_retries=1,
                   retry_backoff_s=0.05)
    job = compute_client.wait(compute_client.submit(spec).id, timeout=60)[0]
    assert job.state == JobState.failed and len(job.attempts) == 2 and job.retries_used == 1
    assert "no retries left" in job.state_reason
    assert "ValueError: bad learning rate" in job.attempts[-1].log_excerpt


def test_cancel_pending_and_running_jobs(start_compute, tmp_path):
    client = start_compute(gpus=1)
    running = client.submit(gate_job(tmp_path / "never", resources={"gpus": 1}))
    wait_started(client, running.id)  # a stop while the command is being forked is seen only by SIGKILL
    pending = client.submit(quick_job(resources={"gpus": 1}, priority="low"))
    assert client.cancel(pending.id, reason="not needed").state == JobState.cancelled
    client.cancel(running.id, reason="wrong config")
    job = wait_state(client, running.id, JobState.cancelled)
    assert job.attempts[0].outcome == AttemptOutcome.cancelled and job.attempts[0].exit_code == -signal.SIGTERM
    assert client.get(pending.id).attempts == []
    assert "wrong config" in [e for e in client.events(job_id=running.id) if e.kind == "stop_requested"][0].reason
    assert job.state_reason == "wrong config"  # the caller's reason, not a generic one
    assert [e.reason for e in client.events(job_id=running.id) if e.kind == "cancelled"] == ["wrong config"]


def test_a_new_job_continues_from_a_cancelled_jobs_checkpoint_dir(compute_client, tmp_path):
    shared = tmp_path / "trial-1"
    first = compute_client.submit(counter_job(STEPS, 0.05, checkpoint_dir=str(shared)))
    wait_until(lambda: "step 5\n" in log_so_far(compute_client, first.id), what="first job progress")
    compute_client.cancel(first.id, reason="window closed")
    stopped = wait_state(compute_client, first.id, JobState.cancelled)
    assert stopped.checkpoint_dir == str(shared) and stopped.state_reason == "window closed"
    saved_at = int(log_text(compute_client, first.id).split("checkpointed at step ")[1].split()[0])

    second = compute_client.submit(counter_job(STEPS, 0.01, checkpoint_dir=str(shared)))
    done = compute_client.wait(second.id, timeout=90)[0]
    assert done.state == JobState.succeeded and done.checkpoint_dir == str(shared)
    resumed = log_text(compute_client, second.id)
    assert resumed.startswith(f"resumed from step {saved_at}\n") and saved_at >= 5
    assert f"result: {EXPECTED}" in resumed


def test_cancel_escalates_to_sigkill_after_the_grace_period(compute_client):
    stubborn = JobSpec(argv=["sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"], grace_s=0.3)
    job = compute_client.submit(stubborn)
    wait_until(lambda: "ready" in log_so_far(compute_client, job.id))
    compute_client.cancel(job.id)
    done = wait_state(compute_client, job.id, JobState.cancelled)
    assert done.attempts[0].exit_code == -signal.SIGKILL
    assert "killed" in [e.kind for e in compute_client.events(job_id=job.id)]


def test_time_limit_stops_the_attempt_as_timed_out(compute_client):
    job = compute_client.submit(JobSpec(argv=["sleep", "60"], time_limit_s=0.5))
    done = compute_client.wait(job.id, timeout=60)[0]
    assert done.state == JobState.failed
    assert done.attempts[0].outcome == AttemptOutcome.timed_out
    assert "time limit" in done.state_reason


def test_sigkill_of_the_daemon_loses_no_job(start_compute, tmp_path):
    client = start_compute(gpus=4)
    home = client.home
    gate = tmp_path / "open"
    survivor = client.submit(gate_job(gate, name="survivor", resources={"gpus": 1}))
    finisher = client.submit(gate_job(tmp_path / "finish", name="finisher", resources={"gpus": 1}))
    victim = client.submit(gate_job(gate, name="victim", resources={"gpus": 1}))
    for job in (survivor, finisher, victim):
        wait_state(client, job.id, JobState.running)
        # running is committed before the spawn, the pid just after it: wait for the pid too
        wait_until(lambda job=job: client.get(job.id).attempts[0].pid, what=f"{job.spec.name}'s pid")
    os.kill(daemon_pid(client.paths), signal.SIGKILL)
    wait_until(lambda: daemon_pid(client.paths) is None, what="daemon gone")
    queued = client.submit(quick_job(name="queued-while-down"))
    (tmp_path / "finish").touch()  # ends while no daemon watches: its exit file keeps the status
    victim_pid = client.get(victim.id).attempts[0].pid
    os.killpg(victim_pid, signal.SIGKILL)  # dies with no exit status: lost, requeued
    wait_until(lambda: not os.path.exists(f"/proc/{victim_pid}") or _zombie(victim_pid), what="victim dead")
    time.sleep(0.3)  # let the finisher write its exit file
    start_daemon(home, DaemonConfig(**FAST_DAEMON))
    gate.touch()
    jobs = client.wait([survivor.id, finisher.id, victim.id, queued.id], timeout=90)
    assert [j.state for j in jobs] == [JobState.succeeded] * 4
    survivor_done, finisher_done, victim_done, _ = jobs
    assert len(survivor_done.attempts) == 1 and len(finisher_done.attempts) == 1
    assert [a.outcome for a in victim_done.attempts] == [AttemptOutcome.lost, AttemptOutcome.succeeded]
    assert victim_done.retries_used == 0


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_missing_program_fails_with_the_shells_message(compute_client):
    job = compute_client.wait(compute_client.submit(JobSpec(argv=["no-such-program-3f9a"])).id, timeout=60)[0]
    assert job.state == JobState.failed and job.attempts[0].exit_code == 127
    assert "no-such-program-3f9a" in job.attempts[0].log_excerpt and "not found" in job.attempts[0].log_excerpt


def test_a_job_that_prints_slowly_within_its_progress_timeout_is_never_stopped(compute_client):
    """Hang detection is about the log not growing, not about run time: 12 lines 0.5 s apart
    run past the 5 s timeout in all, yet no gap reaches it."""
    script = 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "tick $i"; sleep 0.5; done'
    job = compute_client.submit(JobSpec(argv=["sh", "-c", script], progress_timeout_s=5))
    done = compute_client.wait(job.id, timeout=60)[0]
    assert done.state == JobState.succeeded and len(done.attempts) == 1
    assert done.attempts[0].ended_at - done.attempts[0].started_at > 5  # longer than the timeout in all
    assert "stop_requested" not in [e.kind for e in compute_client.events(job_id=job.id)]


def test_a_job_without_progress_timeout_is_never_stopped_for_silence(start_compute):
    """The same silent script twice: without progress_timeout_s it runs to its end; with it,
    every attempt is stopped as hung until the host's infra budget is spent (no user retry),
    and each hang counts against the node, as any infra failure does."""
    client = start_compute(max_infra_retries=1)  # 2 hangs: under the 3 that quarantine the node
    script = "echo started; sleep 4; echo done"
    quiet = client.submit(JobSpec(argv=["sh", "-c", script]))
    watched = client.submit(JobSpec(argv=["sh", "-c", script], progress_timeout_s=1, grace_s=0.2, max_retries=2))
    quiet_done, watched_done = client.wait([quiet.id, watched.id], timeout=90)
    assert quiet_done.state == JobState.succeeded and len(quiet_done.attempts) == 1
    assert "done" in log_text(client, quiet.id)
    assert "stop_requested" not in [e.kind for e in client.events(job_id=quiet.id)]
    assert watched_done.state == JobState.failed and "infra retries used up" in watched_done.state_reason
    assert [(a.outcome, a.stop_reason) for a in watched_done.attempts] == [(AttemptOutcome.infra_failed, "hang")] * 2
    assert (watched_done.retries_used, watched_done.infra_retries_used) == (0, 1)
    counted = [e.reason for e in client.events(node="local") if e.job_id is None and "infra failure" in e.reason]
    assert any("infra failure 2/3" in reason for reason in counted), counted


def test_a_restarted_daemon_still_catches_a_hung_attempt_it_adopted(start_compute):
    client = start_compute()
    script = 'echo started; if [ "$AR_ATTEMPT" = 1 ]; then sleep 600; fi'
    job = client.submit(JobSpec(argv=["sh", "-c", script], progress_timeout_s=6, grace_s=0.2))
    wait_started(client, job.id)  # then killed well within the 6 s, so the next daemon is the one to catch it
    os.kill(daemon_pid(client.paths), signal.SIGKILL)
    wait_until(lambda: daemon_pid(client.paths) is None, what="daemon gone")
    start_daemon(client.home, DaemonConfig(**FAST_DAEMON))
    done = client.wait(job.id, timeout=60)[0]
    assert done.state == JobState.succeeded, done.state_reason
    assert [(a.outcome, a.stop_reason) for a in done.attempts] == [
        (AttemptOutcome.infra_failed, "hang"), (AttemptOutcome.succeeded, None)]
    kinds = [e.kind for e in client.events(job_id=job.id)]
    assert kinds.index("adopted") < kinds.index("stop_requested")  # caught by the new daemon
