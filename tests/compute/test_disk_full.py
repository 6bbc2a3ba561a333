"""A job that hits a full disk (ENOSPC, here from /dev/full) fails as `resource`, not `user`
(issue 20 item 8): the trial's code did nothing wrong."""

from __future__ import annotations

import sys

from compute import Client, FailureClass, JobSpec, JobState
from tests.compute.helpers import wait_state

WRITE = "import sys\nwith open('/dev/full', 'w') as f:\n    f.write('x' * 65536)\n    f.flush()\n"


def test_a_job_killed_by_a_full_disk_is_a_resource_failure(compute_client: Client) -> None:
    job = compute_client.submit(JobSpec(argv=[sys.executable, "-c", WRITE], max_retries=0))
    done = wait_state(compute_client, job.id, JobState.failed)
    attempt = done.attempts[-1]
    assert attempt.failure_class is FailureClass.resource, attempt.log_excerpt
    assert "No space left on device" in (attempt.log_excerpt or "")
