"""An attempt that cannot start says why in its log, and whose fault it is: the job's own request (its
working directory gone since it was submitted: rule `not_started`, a user failure), as opposed to the
fleet's (rule `fleet_not_started`, infra: tests/compute/backends/test_ray_store.py). Both used to read
as `command_not_found` ("check argv[0] and PATH")."""

from __future__ import annotations

from pathlib import Path

from compute import Client, JobSpec, JobState
from compute.records import FailureClass
from tests.compute.helpers import gate_job, wait_state


def test_an_attempt_whose_working_directory_is_gone_fails_as_the_jobs_own_with_the_reason(
        start_compute: object, tmp_path: Path) -> None:
    client: Client = start_compute(gpus=1)  # type: ignore[operator]
    gate = tmp_path / "gate"
    holder = client.submit(gate_job(gate, resources={"gpus": 1}))
    wait_state(client, holder.id, JobState.running)
    work = tmp_path / "work"
    work.mkdir()
    job = client.submit(JobSpec(argv=["true"], cwd=str(work), resources={"gpus": 1}, max_retries=0))
    work.rmdir()  # gone before its turn comes
    gate.touch()
    done = wait_state(client, job.id, JobState.failed)
    [attempt] = done.attempts
    assert (attempt.failure_class, attempt.failure_rule, attempt.exit_code) == (FailureClass.user, "not_started", 127)
    assert f"could not start attempt 1: working directory {work} does not exist" in str(attempt.log_excerpt)
