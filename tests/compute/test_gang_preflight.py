"""The gang preflight through the real daemon on virtual nodes: the cross-node all-reduce (gloo on
CPU, as `gang_preflight: always` runs it where slots are virtual) before the members' argv; a
failed one on one member's node requeues the gang without that node; skipped on virtual GPUs."""

from __future__ import annotations

import re

import pytest

from compute import AttemptOutcome, Client, FailureClass, JobSpec, JobState, NodeState
from compute.health import HealthConfig
from tests.compute.helpers import wait_until

ALWAYS = {"gang_preflight": "always", "preflight_ttl_s": 600, "recheck_backoff_s": 60, "recheck_backoff_max_s": 60}
RUN = 'echo "run on rank $AR_NODE_RANK"'


def kinds(client: Client, job_id: str) -> list[str]:
    return [e.kind for e in client.events(job_id=job_id)]


def test_virtual_gpus_skip_the_preflight_and_the_events_say_so(start_compute):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1)
    job = client.submit(JobSpec(argv=["sh", "-c", RUN], resources={"gpus": 1, "nodes": 2}))
    assert client.wait(job.id, timeout=60)[0].state is JobState.succeeded
    skipped = next(e for e in client.events(job_id=job.id) if e.kind == "gang_preflight_skipped")
    assert skipped.reason.startswith("gang preflight skipped: virtual GPUs (local-0, local-1 offer GPU slots")
    assert "gang preflight" not in client.log_path(job.id).read_text()


def test_the_preflight_is_off_when_the_health_config_says_so(start_compute):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1,
                           health=HealthConfig(gang_preflight="off"))
    job = client.submit(JobSpec(argv=["sh", "-c", RUN], resources={"gpus": 1, "nodes": 2}))
    assert client.wait(job.id, timeout=60)[0].state is JobState.succeeded
    assert [e.reason for e in client.events(job_id=job.id) if e.kind == "gang_preflight_skipped"] == [
        "gang preflight off (health config gang_preflight: off)"]


@pytest.mark.torch
def test_a_passing_preflight_lets_the_gang_run_and_is_recorded(start_compute):
    pytest.importorskip("torch")
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1, health=HealthConfig(**ALWAYS))
    job = client.submit(JobSpec(argv=["sh", "-c", RUN], resources={"gpus": 1, "nodes": 2}))
    done = client.wait(job.id, timeout=120)[0]
    assert done.state is JobState.succeeded, done.state_reason
    events = {e.kind: e.reason for e in client.events(job_id=job.id)}
    assert "all-reduce (gloo on CPU: virtual GPU slots) across local-0, local-1" in events["gang_preflight_started"]
    assert re.match(r"gang preflight passed on all 2 members in [\d.]+ s: all-reduce \(gloo\) across 2 nodes "
                    r"gave 3 as expected", events["gang_preflight_passed"]), events["gang_preflight_passed"]
    for rank in (0, 1):
        lines = client.log_path(job.id, rank=rank).read_text().splitlines()
        assert lines[0].startswith(f"[autoresearch] gang preflight passed on rank {rank}: ")
        assert lines[1] == f"run on rank {rank}"  # the argv ran after the preflight, in the same log


@pytest.mark.torch
def test_a_failed_preflight_requeues_the_gang_without_that_node_which_counts_toward_quarantine(start_compute):
    pytest.importorskip("torch")
    health = HealthConfig(**ALWAYS, infra_failures_to_quarantine=1)
    client = start_compute(gpus=None, virtual_nodes=3, gpus_per_node=1, health=health)
    wait_until(lambda: all(n.last_probe_at for n in client.nodes()), what="every node probed")
    fault = client.inject_fault("local-1", "gang_nccl")
    # the new fault has local-1 probed again first (its probe passes: gang_nccl spares probes)
    wait_until(lambda: (next(n for n in client.nodes() if n.name == "local-1").last_probe_at or 0) >= fault.injected_at,
               what="local-1 probed after the fault")
    job = client.submit(JobSpec(argv=["sh", "-c", RUN], resources={"gpus": 1, "nodes": 2}))
    done = client.wait(job.id, timeout=180)[0]
    assert done.state is JobState.succeeded, done.state_reason
    first, second = done.attempts
    assert [m.node for m in first.members] == ["local-0", "local-1"]
    assert (first.outcome, first.failure_class) == (AttemptOutcome.infra_failed, FailureClass.infra)
    assert "local-1" not in {m.node for m in second.members} and done.retries_used == 0
    failed = next(e for e in client.events(job_id=job.id) if e.kind == "gang_preflight_failed")
    assert failed.node == "local-1"
    assert failed.reason.startswith("gang preflight failed on rank 1 (local-1): injected fault (drill): NCCL")
    assert "[autoresearch] gang preflight failed on rank 1 (local-1)" in client.log_path(
        job.id, attempt=1, rank=1).read_text()
    assert "gang_preflight_passed" in kinds(client, job.id)  # the second attempt's, on local-0 and local-2
    node = next(n for n in client.nodes() if n.name == "local-1")
    assert node.state is NodeState.quarantined, node


ON_SLOT_1 = """import os, sys, time
# local-1's only slot is 1: its member's preflight check never reaches the rendezvous
if os.environ.get("CUDA_VISIBLE_DEVICES") == "1" and "--check" in sys.argv:
    {}
"""


@pytest.mark.torch
@pytest.mark.parametrize("never_joins", ["time.sleep(600)", "os._exit(0)"], ids=["hangs", "runs-its-argv-and-exits-0"])
def test_a_member_that_never_joins_is_blamed_by_rank_0_and_left_out_of_the_rerun(start_compute, tmp_path, never_joins):
    pytest.importorskip("torch")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(ON_SLOT_1.format(never_joins))
    health = HealthConfig(**{**ALWAYS, "gang_preflight_timeout_s": 20})
    client = start_compute(gpus=None, virtual_nodes=3, gpus_per_node=1, grace_s=1.0, health=health)
    # nodes take work once probed, in no fixed order: before all are, the gang could start on local-0 and local-2
    wait_until(lambda: all(n.last_probe_at for n in client.nodes()), what="every node probed")
    job = client.submit(JobSpec(argv=["sh", "-c", RUN], resources={"gpus": 1, "nodes": 2},
                                env={"PYTHONPATH": str(tmp_path / "site")}))
    done = client.wait(job.id, timeout=240)[0]
    assert done.state is JobState.succeeded, done.state_reason
    first, second = done.attempts
    assert [m.node for m in first.members] == ["local-0", "local-1"]
    assert (first.outcome, first.failure_class) == (AttemptOutcome.infra_failed, FailureClass.infra)
    assert "local-1" not in {m.node for m in second.members}
    failed = next(e for e in client.events(job_id=job.id) if e.kind == "gang_preflight_failed")
    assert failed.node == "local-1"
    assert failed.reason.startswith("gang preflight failed on rank 1 (local-1) (rank 0 reports): rank 1 never "
                                    "joined the rendezvous within 20 s"), failed.reason
    # the member was stopped (or had exited, even 0), and its log carries the line that classified the attempt
    assert "[autoresearch] gang preflight failed on rank 1 (local-1)" in client.log_path(
        job.id, attempt=1, rank=1).read_text()
