"""A remote store on real Ray nodes. `--storage s3://...` against a local S3-compatible server (moto's, from the
package index): the job's working directory and its checkpoint directory go through the bucket, its
log comes back over Ray while it runs, and an attempt on a node that lacks the checkpoint directory
(here: removed from the one host between attempts) restores it from the bucket and resumes from the
saved step. The node probe reads the daemon's sentinel in the bucket. (A working directory restored
on hosts that share no filesystem, with a `file://` store: test_ray_private_nodes.py.)"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compute import AttemptOutcome, Client, JobSpec, JobState
from compute.records import FailureClass
from compute.records import NodeState
from compute.storage import SENTINEL
from tests.compute.helpers import log_so_far, wait_state, wait_until
from tests.compute.s3_server import S3Server

pytestmark = pytest.mark.ray

TRAIN = """step=$(cat "$AR_CHECKPOINT_DIR/step" 2>/dev/null || echo 0)
echo "attempt $AR_ATTEMPT resumes at step $step"
trap 'echo saved at step $step; exit 0' TERM
while [ ! -e "$1" ]; do step=$((step+1)); echo "$step" > "$AR_CHECKPOINT_DIR/step"; echo "step $step"; sleep 0.2; done
echo "done at step $step"
"""


def test_a_job_through_an_s3_store_logs_back_and_resumes_from_the_bucket(
        ray_cluster: Any, start_compute: Callable[..., Client], s3: S3Server, tmp_path: Path) -> None:
    uri = s3.bucket()
    client = start_compute(backend="ray", ray_address=ray_cluster.address, gpus=None, storage=uri)
    assert any(key.startswith(SENTINEL) for key in s3.keys(uri))
    wait_until(lambda: all(s.last_probe_at for s in client.node_status()), what="every node's first probe")
    assert all(s.state is NodeState.active for s in client.node_status()), client.node_status()

    work = tmp_path / "work"
    work.mkdir()
    (work / "train.sh").write_text(TRAIN)
    gate, high_gate = tmp_path / "gate", tmp_path / "high-gate"
    low = client.submit(JobSpec(argv=["sh", "train.sh", str(gate)], cwd=str(work), priority="low",
                                resources={"gpus": 2}))
    wait_until(lambda: "step 3" in log_so_far(client, low.id, 1), what="low at step 3, its log read here")
    assert client.get(low.id).state is JobState.running
    assert f"work/{low.id}/train.sh" in s3.keys(uri)
    wait_until(lambda: f"checkpoints/{low.id}/LATEST" in s3.keys(uri), what="the checkpoint kept in the bucket")

    high = client.submit(JobSpec(argv=["sh", "-c", f'while [ ! -e "{high_gate}" ]; do sleep 0.1; done'],
                                 cwd=str(work), priority="high", resources={"gpus": 2}))
    wait_until(lambda: (a := client.get(low.id).attempts) and a[0].outcome is AttemptOutcome.preempted,
               what="low preempted")
    saved = int(log_so_far(client, low.id, 1).split("saved at step ")[1].split()[0])
    assert saved >= 3
    # The next attempt's node lacks the checkpoint directory: it must come from the bucket.
    shutil.rmtree(client.get(low.id).checkpoint_dir)
    high_gate.touch()
    text = wait_until(lambda: "resumes at step" in (t := log_so_far(client, low.id, 2)) and t, what="low attempt 2")
    assert f"attempt 2 resumes at step {saved}" in text
    gate.touch()
    done = wait_state(client, low.id, JobState.succeeded)
    assert "done at step" in log_so_far(client, low.id) and len(done.attempts) == 2
    assert wait_state(client, high.id, JobState.succeeded).attempts[0].outcome is AttemptOutcome.succeeded


def test_a_job_whose_working_directory_holds_the_daemons_home_is_refused_with_the_reason(
        ray_cluster: Any, start_compute: Callable[..., Client], s3: S3Server, tmp_path: Path) -> None:
    """Its folder would be uploaded with the daemon's store, logs and checkpoints in it, while they are
    written (a copy that fails or never ends): the attempt does not start, and its log says why."""
    uri = s3.bucket()
    client = start_compute(backend="ray", ray_address=ray_cluster.address, gpus=None, storage=uri)
    assert client.home.parent == tmp_path
    job = client.submit(JobSpec(argv=["true"], cwd=str(tmp_path), max_retries=0))
    done = wait_until(lambda: (j := client.get(job.id)).state.final and j, what="the job ended")
    assert done.state is JobState.failed
    assert f"its working directory {tmp_path} holds the daemon's home {client.home}" in log_so_far(client, job.id)
    assert not [key for key in s3.keys(uri) if key.startswith("work/")]  # nothing of it was uploaded


def test_a_working_directory_the_daemon_cannot_upload_is_the_fleets_failure_not_the_jobs(
        ray_cluster: Any, start_compute: Callable[..., Client], tmp_path: Path) -> None:
    """The store takes no upload (here a file stands where its `work` folder goes; in life, a bucket
    gone or a credential expired): the attempt does not start, and that is an infra failure, requeued
    without spending the job's retries (it was rule `command_not_found`, a user failure, before)."""
    store = tmp_path / "store"
    client = start_compute(backend="ray", ray_address=ray_cluster.address, gpus=None, storage=f"file://{store}")
    (store / "work").write_text("not a folder")
    work = tmp_path / "work"
    work.mkdir()
    job = client.submit(JobSpec(argv=["true"], cwd=str(work), max_retries=2))
    first = wait_until(lambda: (a := client.get(job.id).attempts) and a[0].outcome and a[0], what="attempt 1 ended")
    assert (first.outcome, first.failure_class, first.failure_rule) == (
        AttemptOutcome.infra_failed, FailureClass.infra, "fleet_not_started")
    assert "could not upload its working directory" in str(first.log_excerpt)
    again = client.get(job.id)
    assert again.retries_used == 0 and again.infra_retries_used == 1
    client.cancel(job.id)
