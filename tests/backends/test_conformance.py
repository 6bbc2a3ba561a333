"""What every backend must do, written once and run on each (`backend` param: local, ray).

Each test starts a daemon whose one node has 2 GPU slots, with real processes and
signals: exit codes, the attempt's environment and log, SIGTERM -> checkpoint ->
requeue -> resume on preemption, cancel (SIGTERM, then SIGKILL after the grace), time
limits, `down --stop-jobs`, and a daemon restart that adopts running attempts and
settles one that ended while no daemon watched.
"""

from __future__ import annotations

import signal

from compute import AttemptOutcome, DaemonConfig, JobSpec, JobState, start_daemon, stop_daemon
from compute.control import daemon_info
from tests.compute.helpers import counter_job, env_job, gate_job, log_text, quick_job, wait_state, wait_until

STEPS = 40
BOTH = {"gpus": 2}


def test_exit_codes_and_log_excerpts(start):
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


def test_attempt_environment_gpus_and_ids(start, backend):
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


def test_preemption_sigterm_checkpoint_requeue_resume(start):
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


def test_cancel_sends_sigterm(start, tmp_path):
    client = start()
    job = client.submit(gate_job(tmp_path / "never", resources=BOTH))
    wait_started(client, job.id)
    client.cancel(job.id, reason="wrong config")
    done = wait_state(client, job.id, JobState.cancelled)
    assert (done.attempts[0].outcome, done.attempts[0].exit_code) == (AttemptOutcome.cancelled, -signal.SIGTERM)


def test_cancel_escalates_to_sigkill_after_the_grace(start):
    client = start()
    stubborn = JobSpec(argv=["sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"], grace_s=0.3)
    job = client.submit(stubborn)
    wait_until(lambda: "ready" in _log(client, job.id), what="stubborn job ready")
    client.cancel(job.id)
    done = wait_state(client, job.id, JobState.cancelled)
    assert done.attempts[0].exit_code == -signal.SIGKILL
    assert "killed" in [e.kind for e in client.events(job_id=job.id)]


def test_time_limit(start):
    client = start()
    done = client.wait(client.submit(JobSpec(argv=["sleep", "60"], time_limit_s=0.5)).id, timeout=90)[0]
    assert done.state == JobState.failed and done.attempts[0].outcome == AttemptOutcome.timed_out


def test_down_with_stop_jobs_requeues(start, tmp_path):
    client = start()
    job = client.submit(gate_job(tmp_path / "never", resources=BOTH))
    wait_started(client, job.id)
    stop_daemon(client.home, stop_jobs=True)
    requeued = client.get(job.id)
    assert requeued.state == JobState.pending and requeued.attempts[0].outcome == AttemptOutcome.preempted


def test_a_restarted_daemon_adopts_running_attempts_and_settles_ended_ones(start, tmp_path):
    client = start()
    config = _daemon_config(client)
    gate, finish = tmp_path / "open", tmp_path / "finish"
    survivor = client.submit(gate_job(gate, name="survivor", resources={"gpus": 1}))
    script = f'echo up; while [ ! -e "{finish}" ]; do sleep 0.05; done; echo bye; exit 3'
    finisher = client.submit(JobSpec(argv=["sh", "-c", script], name="finisher", resources={"gpus": 1}, max_retries=0))
    for job in (survivor, finisher):
        wait_started(client, job.id)
    stop_daemon(client.home)  # attempts keep running
    finish.touch()  # ends while no daemon watches: its exit code must not be lost
    wait_until(lambda: "bye" in _log(client, finisher.id), what="the finisher to end")
    start_daemon(client.home, config)
    gate.touch()
    survivor_done, finisher_done = client.wait([survivor.id, finisher.id], timeout=90)
    assert survivor_done.state == JobState.succeeded and len(survivor_done.attempts) == 1
    assert (len(finisher_done.attempts), finisher_done.attempts[0].exit_code) == (1, 3)
    assert finisher_done.state == JobState.failed
    assert "adopted" in [e.kind for e in client.events(job_id=survivor.id)]


def wait_started(client, job_id: str) -> None:
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
    return DaemonConfig.model_validate(daemon_info(client.paths)["config"])
