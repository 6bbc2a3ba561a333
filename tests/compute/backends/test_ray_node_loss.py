"""Node loss in seconds: a Ray worker node whose processes are SIGKILLed (raylet, its workers, our
agent) is found lost by the backend's heartbeat on its agent, well before Ray's own health checks
declare it dead (period 3 s x 5 failures by default), and the job that ran there resumes from its
checkpoint on another node."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from compute import AttemptOutcome, Client, JobSpec, JobState
from tests.compute.helpers import gate_job, log_text, wait_state, wait_until

pytestmark = pytest.mark.ray
RAY_OWN_DETECTION_S = 15.0
"""Ray 2.60's defaults: health_check_period_ms 3000 x health_check_failure_threshold 5."""


def checkpointing_job(stop: Path) -> JobSpec:
    """Counts steps into $AR_CHECKPOINT_DIR/step, starting from the last one saved, until `stop` exists."""
    script = ('step=$(cat "$AR_CHECKPOINT_DIR/step" 2>/dev/null || echo 0); echo "attempt $AR_ATTEMPT from step $step"; '
              f'while [ ! -e "{stop}" ]; do step=$((step+1)); echo $step > "$AR_CHECKPOINT_DIR/step"; sleep 0.1; done')
    return JobSpec(argv=["sh", "-c", script], resources={"gpus": 2})


def _first_line(client: Client, job_id: str, attempt: int) -> str | None:
    try:
        text = log_text(client, job_id, attempt)
    except OSError:  # not created yet
        return None
    return text.splitlines()[0] if "\n" in text else None


def test_a_killed_node_is_lost_in_seconds_and_its_job_resumes_from_its_checkpoint(
        ray_cluster: Any, start_compute: Callable[..., Client], tmp_path: Path) -> None:
    client = start_compute(backend="ray", ray_address=ray_cluster.address, gpus=None)
    head_gate, stop = tmp_path / "head", tmp_path / "stop"
    head_job = client.submit(gate_job(head_gate, resources={"gpus": 2}))  # the head is the only node yet
    wait_state(client, head_job.id, JobState.running)
    worker = ray_cluster.add_node(num_cpus=1, num_gpus=2)
    try:
        wait_until(lambda: len(client.nodes()) == 2, timeout=60, what="the worker node in the node table")
        worker_name = next(n.name for n in client.nodes() if n.address == worker.node_id)
        job = client.submit(checkpointing_job(stop))
        running = wait_state(client, job.id, JobState.running)
        assert running.attempts[0].node == worker_name
        step_file = Path(running.checkpoint_dir) / "step"
        wait_until(lambda: step_file.exists() and int(step_file.read_text() or 0) >= 3, timeout=60,
                   what="three steps checkpointed on the worker")
        killed_at = time.time()
        ray_cluster.remove_node(worker, allow_graceful=False)  # SIGKILL: raylet, workers, our agent
        lost = wait_until(lambda: (j := client.get(job.id)).attempts[0].outcome is not None and j, timeout=60,
                          what="the attempt on the killed node settled")
        assert lost.attempts[0].outcome is AttemptOutcome.lost and lost.retries_used == 0
        seen_after = lost.attempts[0].ended_at - killed_at
        assert seen_after < RAY_OWN_DETECTION_S / 2, f"the lost node was seen only after {seen_after:.1f} s"
        head_gate.touch()  # the head frees: the job's next attempt runs there, from its checkpoint
        resumed = wait_until(lambda: len((j := client.get(job.id)).attempts) == 2 and j, timeout=60,
                             what="the job's second attempt")
        assert resumed.attempts[1].node != worker_name
        first_line = wait_until(lambda: _first_line(client, job.id, 2), timeout=60, what="attempt 2's first line")
        assert first_line.startswith("attempt 2 from step ") and int(first_line.split()[-1]) >= 3, first_line
        stop.touch()
        done = client.wait([job.id, head_job.id], timeout=90)
        assert all(j.state is JobState.succeeded for j in done)
    finally:
        if worker in ray_cluster.worker_nodes:
            ray_cluster.remove_node(worker, allow_graceful=False)
