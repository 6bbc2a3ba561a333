"""A real torch.distributed job (DDP, gloo, CPU) as a gang of 2 virtual nodes x 2 slots under
`launcher: torchrun`: preempted and resumed with the same loss curve; a killed member; a fault."""

from __future__ import annotations

import os
import re
import signal
import sys
from pathlib import Path

import pytest

from compute import AttemptOutcome, Client, FailureClass, JobSpec, JobState, NodeState
from compute.health import HealthConfig
from tests.compute.helpers import wait_until

pytest.importorskip("torch")

SCRIPT = Path(__file__).resolve().parents[1] / "data" / "ddp_train.py"
STEP = re.compile(r"^step (\d+) loss: (\S+)$", re.M)
pytestmark = [pytest.mark.torch, pytest.mark.slow]


def ddp_job(tmp_path: Path, name: str, gpus: int = 2, steps: int = 24, **fields) -> JobSpec:
    """The DDP script on 2 nodes x `gpus` slots (torchrun starts `gpus` processes per node)."""
    env = {"DDP_STEPS": str(steps), "DDP_STEP_S": "0.25", "PATH": os.environ["PATH"], "OMP_NUM_THREADS": "1"}
    return JobSpec(name=name, argv=[sys.executable, str(SCRIPT)], env=env, launcher="torchrun",
                   resources={"gpus": gpus, "nodes": 2}, checkpoint_dir=str(tmp_path / name), **fields)


def curve(client: Client, job_id: str) -> dict[int, str]:
    """Rank 0's `step N loss: X` lines over every attempt (a resumed attempt continues the curve)."""
    job = client.get(job_id)
    out: dict[int, str] = {}
    for a in job.attempts:
        out.update((int(s), v) for s, v in STEP.findall(Path(a.log_path).read_text()))
    return out


def steps_so_far(client: Client, job_id: str) -> int:
    job = client.get(job_id)
    log = Path(job.attempts[-1].log_path) if job.attempts else None
    return len(STEP.findall(log.read_text())) if log is not None and log.exists() else 0


def test_a_preempted_ddp_gang_resumes_from_its_checkpoint_with_the_same_loss_curve(start_compute, tmp_path):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=2, grace_s=20.0, min_runtime_s=0.2)
    job = client.submit(ddp_job(tmp_path, "preempted", priority="low"))
    wait_until(lambda: steps_so_far(client, job.id) >= 4, timeout=180, what="4 training steps")
    urgent = client.submit(JobSpec(argv=["true"], resources={"gpus": 2}, priority="urgent"))
    done = client.wait([urgent.id, job.id], timeout=300)
    assert [j.state for j in done] == [JobState.succeeded] * 2, [j.state_reason for j in done]
    first, second = done[1].attempts[:2]
    assert first.outcome is AttemptOutcome.preempted and len(first.members) == 2
    assert "checkpointed at step" in Path(first.log_path).read_text()
    assert "resumed at step" in Path(second.log_path).read_text()
    resumed = curve(client, job.id)

    plain = client.submit(ddp_job(tmp_path, "uninterrupted"))
    assert client.wait(plain.id, timeout=300)[0].state is JobState.succeeded
    assert resumed == curve(client, plain.id) and sorted(resumed) == list(range(24))


def test_killing_one_member_stops_the_other_within_the_grace_and_the_gang_requeues(start_compute, tmp_path):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1, grace_s=3.0)
    job = client.submit(ddp_job(tmp_path, "killed", gpus=1, steps=12, max_retries=1, retry_backoff_s=0.1))
    wait_until(lambda: steps_so_far(client, job.id) >= 2, timeout=180, what="2 training steps")
    os.kill(int((tmp_path / "killed" / "pids" / "1-0").read_text()), signal.SIGKILL)
    done = client.wait(job.id, timeout=300)[0]
    assert done.state is JobState.succeeded, done.state_reason
    first = done.attempts[0]
    assert first.outcome is AttemptOutcome.failed and first.stop_reason == "member_failed"
    stop = next(e for e in client.events(job_id=job.id) if e.kind == "stop_requested")
    # rank 1's torchrun sees its worker killed while rank 0's workers see their peer gone: either
    # member may exit first; the other is stopped within the grace
    assert re.match(r"rank [01] on \S+ exited", stop.reason), stop.reason
    assert first.ended_at - stop.ts <= 3.0 + 2.0  # grace + 2 s
    assert len(done.attempts) == 2 and done.retries_used == 1


def test_a_fault_on_one_members_node_quarantines_it_and_the_gang_finishes_elsewhere(start_compute, tmp_path):
    health = HealthConfig(preflight_ttl_s=600, recheck_backoff_s=60, recheck_backoff_max_s=60)
    client = start_compute(gpus=None, virtual_nodes=3, gpus_per_node=1, grace_s=3.0, health=health)
    job = client.submit(ddp_job(tmp_path, "faulted", gpus=1, steps=12))
    wait_until(lambda: steps_so_far(client, job.id) >= 2, timeout=180, what="2 training steps")
    bad = client.get(job.id).attempts[0].members[1].node
    client.inject_fault(bad, "nccl")
    done = client.wait(job.id, timeout=300)[0]
    assert done.state is JobState.succeeded, done.state_reason
    first, second = done.attempts[:2]
    assert (first.outcome, first.failure_class) == (AttemptOutcome.infra_failed, FailureClass.infra)
    assert bad not in {m.node for m in second.members} and done.retries_used == 0
    wait_until(lambda: next(n for n in client.nodes() if n.name == bad).state is NodeState.quarantined,
               what=f"{bad} quarantined")
