"""A missing image, a stopped runtime daemon or a missing runtime is an infra failure that says
what to pull or start, never a user failure: checked on what the real runtimes print."""

from __future__ import annotations

import subprocess

import pytest

from compute import FailureClass, JobSpec, JobState, classify_failure
from compute.health import Classifier
from tests.compute.containers.conftest import BUSYBOX
from tests.compute.containers.test_jobs import SLOW


def test_an_image_that_does_not_exist_fails_as_infra_and_says_to_pull_it(start_compute, runtime, tmp_path):
    client = start_compute(max_infra_retries=0)
    job = client.submit(JobSpec(argv=["true"], image="local/absent-image", container_runtime=runtime,
                                cwd=str(tmp_path)))
    done = client.wait(job.id, timeout=SLOW)[0]
    attempt = done.attempts[-1]
    assert done.state is JobState.failed and attempt.failure_class is FailureClass.infra, attempt.log_excerpt
    assert "pull or import it" in attempt.log_excerpt


def test_a_stopped_docker_daemon_is_infra_and_says_to_start_it(container_runtimes, tmp_path):
    done = subprocess.run(["docker", "-H", f"unix://{tmp_path}/no-daemon.sock", "run", "--rm", BUSYBOX, "true"],
                          capture_output=True, text=True, timeout=60)
    verdict = Classifier().classify(done.returncode, done.stderr)
    assert done.returncode != 0 and verdict.failure_class is FailureClass.infra, done.stderr
    assert verdict.rule == "container_daemon_down" and "start it" in verdict.explanation


@pytest.mark.parametrize("name", ["docker", "podman"])
def test_a_missing_runtime_is_infra_not_a_missing_user_command(start_compute, name, tmp_path):
    client = start_compute(max_infra_retries=0)
    job = client.submit(JobSpec(argv=["true"], image=BUSYBOX, container_runtime=name, cwd=str(tmp_path),
                                env={"PATH": str(tmp_path)}))  # the runtime cannot be found on this PATH
    done = client.wait(job.id, timeout=SLOW)[0]
    attempt = done.attempts[-1]
    assert attempt.exit_code == 127 and attempt.failure_class is FailureClass.infra, attempt.log_excerpt
    assert classify_failure(127, None, "sh: 1: python: not found") is FailureClass.user  # a job's own command
