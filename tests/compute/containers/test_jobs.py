"""Jobs in real containers (docker and podman): env and mounts arrive, stops go through the
runtime and leave no container, a restarted daemon adopts a container by name."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from compute import AttemptOutcome, ComputeError, JobSpec, JobState
from compute.control import daemon_pid, start_daemon
from compute.daemon_config import DaemonConfig
from skills import SkillContext
from skills.builtin import builtin_registry
from tests.compute.containers.conftest import BUSYBOX, our_containers, running_containers
from tests.compute.helpers import log_text, wait_state, wait_until
from tests.conftest import FAST_DAEMON

SLOW = 180.0
"""Seconds to wait for anything: a container start costs seconds on a loaded 2-core machine."""


def gone(runtime: str) -> None:
    """Wait until no container of ours is left (the daemon removes it just after recording the end)."""
    wait_until(lambda: not our_containers(runtime), SLOW, f"no ar-* container left in {runtime} ps -a")


def output(client, job_id: str, attempt: int | None = None) -> str:
    """The attempt's log so far ('' before the backend created it)."""
    try:
        return log_text(client, job_id, attempt)
    except (FileNotFoundError, ComputeError):
        return ""


def started(client, job_id: str) -> None:
    wait_until(lambda: "started" in output(client, job_id), SLOW, f"{job_id} printed 'started'")


def box(runtime: str, script: str, **fields: object) -> JobSpec:
    return JobSpec(argv=["sh", "-c", script], image=BUSYBOX, container_runtime=runtime, **fields)


def test_env_mounts_user_and_read_only_data_arrive_and_the_container_is_removed(compute_client, runtime, tmp_path):
    data = tmp_path / "train.txt"
    data.write_text("tokens\n")
    script = ('echo uid=$(id -u); echo cwd=$(pwd); echo data=$AR_DATA_TRAIN; cat $AR_DATA_TRAIN; '
              'if touch $AR_DATA_TRAIN 2>/dev/null; then echo data-writable; else echo data-read-only; fi; '
              'echo ckpt=$AR_CHECKPOINT_DIR; echo saved > $AR_CHECKPOINT_DIR/state; echo made > out.txt; '
              'echo cuda=$CUDA_VISIBLE_DEVICES; echo extra=$EXTRA; echo job=$AR_JOB_ID')
    job = compute_client.submit(box(runtime, script, cwd=str(tmp_path), env={"EXTRA": "x y"},
                                    data={"train": str(data)}, resources={"gpus": 2}))
    done = compute_client.wait(job.id, timeout=SLOW)[0]
    lines = log_text(compute_client, job.id).splitlines()
    assert done.state is JobState.succeeded, lines
    assert f"uid={os.getuid()}" in lines and f"cwd={tmp_path}" in lines
    assert "data=/data/train" in lines and "tokens" in lines and "data-read-only" in lines
    assert "extra=x y" in lines and f"job={job.id}" in lines
    assert "cuda=0,1" in lines  # virtual slots: no --gpus (it would fail), the variable only
    assert f"ckpt={done.checkpoint_dir}" in lines
    assert Path(done.checkpoint_dir, "state").read_text() == "saved\n" and (tmp_path / "out.txt").is_file()
    gone(runtime)


def test_cancel_stops_the_container_through_the_runtime(compute_client, runtime):
    # a grace long enough for the runtime to pass SIGTERM on under load (the daemon's 1 s is not, for podman)
    job = compute_client.submit(box(runtime, "echo started; sleep 300", grace_s=15))
    started(compute_client, job.id)
    wait_until(lambda: f"ar-{job.id}-1" in our_containers(runtime), SLOW, "the container")
    compute_client.cancel(job.id, "test")
    done = wait_state(compute_client, job.id, JobState.cancelled, SLOW)
    assert done.attempts[0].exit_code == -signal.SIGTERM  # --init passed SIGTERM on to sleep
    gone(runtime)


def test_a_time_limit_kills_a_container_that_ignores_sigterm(compute_client, runtime):
    job = compute_client.submit(box(runtime, "trap '' TERM; echo started; while true; do sleep 0.2; done",
                                    time_limit_s=2, grace_s=1))
    done = compute_client.wait(job.id, timeout=SLOW)[0]
    assert done.state is JobState.failed and done.attempts[0].outcome is AttemptOutcome.timed_out
    assert done.attempts[0].exit_code == -signal.SIGKILL  # killed through the runtime after the grace
    gone(runtime)


def test_a_preempted_container_job_resumes_from_its_checkpoint_dir(compute_client, runtime, tmp_path):
    gate = tmp_path / "gate"
    script = ('n=$(cat $AR_CHECKPOINT_DIR/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > $AR_CHECKPOINT_DIR/n; '
              f'echo run=$n; echo started; while [ ! -e {gate} ]; do sleep 0.1; done')
    low = compute_client.submit(box(runtime, script, cwd=str(tmp_path), priority="low", resources={"gpus": 4}))
    started(compute_client, low.id)
    high = compute_client.submit(box(runtime, "echo urgent", priority="high", resources={"gpus": 4}))
    wait_state(compute_client, high.id, JobState.succeeded, SLOW)
    wait_until(lambda: "run=2" in output(compute_client, low.id, 2), SLOW, "the second attempt")
    gate.touch()
    done = wait_state(compute_client, low.id, JobState.succeeded, SLOW)
    assert [a.number for a in done.attempts] == [1, 2]
    assert "run=1" in log_text(compute_client, low.id, 1)
    gone(runtime)


def test_a_restarted_daemon_adopts_a_live_container_by_name_and_reads_an_ended_one(start_compute, runtime, tmp_path):
    client = start_compute()
    gates = [tmp_path / "live", tmp_path / "ended"]
    jobs = [client.submit(box(runtime, f"echo started; while [ ! -e {g} ]; do sleep 0.1; done; exit {code}",
                              cwd=str(tmp_path))) for g, code in zip(gates, (0, 3))]
    for job in jobs:
        started(client, job.id)
        wait_until(lambda job=job: f"ar-{job.id}-1" in our_containers(runtime), SLOW, "the container")
    os.kill(daemon_pid(client.paths), signal.SIGKILL)
    for job in jobs:  # the attempt scripts and runtime clients die; the containers live on
        os.killpg(int((client.paths.run_dir / f"{job.id}.1.pid").read_text()), signal.SIGKILL)
    wait_until(lambda: daemon_pid(client.paths) is None, SLOW, "the daemon gone")
    gates[1].touch()  # this one ends while no daemon watches it
    wait_until(lambda: f"ar-{jobs[1].id}-1" not in running_containers(runtime), SLOW, "the second container exited")
    start_daemon(client.home, DaemonConfig(**FAST_DAEMON))
    wait_until(lambda: "adopted" in [e.kind for e in client.events(job_id=jobs[0].id)], SLOW, "adoption")
    ended = client.wait(jobs[1].id, timeout=SLOW)[0]
    assert ended.state is JobState.failed and ended.attempts[0].exit_code == 3  # read from the runtime
    assert client.get(jobs[0].id).state is JobState.running
    gates[0].touch()
    done = wait_state(client, jobs[0].id, JobState.succeeded, SLOW)
    assert done.attempts[0].exit_code == 0  # no client was left to write it: the runtime said so
    gone(runtime)


def test_submit_job_over_the_skill_runs_an_image_with_a_dataset(compute_client, tracking, runtime, tmp_path):
    ctx = SkillContext(home=compute_client.home, tracking=tracking, client_factory=lambda: compute_client)
    (tmp_path / "d.txt").write_text("rows\n")
    skills = builtin_registry()
    out = skills.call("submit_job", {"argv": ["sh", "-c", "echo started; cat $AR_DATA_ROWS"], "image": BUSYBOX,
                                     "container_runtime": runtime, "data": {"rows": str(tmp_path / "d.txt")},
                                     "cwd": str(tmp_path)}, ctx)
    done = compute_client.wait(out.job.id, timeout=SLOW)[0]
    assert done.state is JobState.succeeded and done.spec.image == BUSYBOX
    assert output(compute_client, out.job.id).split() == ["started", "rows"]
    gone(runtime)
