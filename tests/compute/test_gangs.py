"""Multi-node jobs (gangs) through the real daemon on virtual nodes: members start together with
their wiring, one failed member stops the others, per-member logs."""

from __future__ import annotations

import re

from compute import AttemptOutcome, FailureClass, JobSpec, JobState
from tests.compute.helpers import wait_until

WIRING = 'echo "$AR_NNODES $AR_NODE_RANK $AR_GPUS_PER_NODE $MASTER_ADDR $MASTER_PORT $CUDA_VISIBLE_DEVICES $AR_CHECKPOINT_DIR"'


def test_members_start_on_distinct_nodes_with_their_rank_and_a_shared_master(start_compute):
    client = start_compute(gpus=None, virtual_nodes=3, gpus_per_node=2)
    job = client.submit(JobSpec(argv=["sh", "-c", WIRING], resources={"gpus": 2, "nodes": 2}))
    done = client.wait(job.id, timeout=60)[0]
    assert done.state is JobState.succeeded, done.state_reason
    (attempt,) = done.attempts
    assert [m.rank for m in attempt.members] == [0, 1] and len({m.node for m in attempt.members}) == 2
    assert (attempt.node, attempt.gpus, attempt.log_path) == (attempt.members[0].node, attempt.members[0].gpus,
                                                                attempt.members[0].log_path)
    lines = [client.log_path(job.id, rank=r).read_text().split() for r in (0, 1)]
    assert [line[:4] for line in lines] == [["2", "0", "2", "127.0.0.1"], ["2", "1", "2", "127.0.0.1"]]
    assert lines[0][4] == lines[1][4] and lines[0][4].isdigit()  # one MASTER_PORT for the attempt
    assert lines[0][6] == lines[1][6] == done.checkpoint_dir
    assert [line[5] for line in lines] == [",".join(map(str, m.gpus)) for m in attempt.members]


def test_one_failed_member_stops_the_others_and_the_attempt_ends_as_it_did(start_compute):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1, grace_s=1.0)
    script = ('if [ "$AR_NODE_RANK" = 1 ]; then sleep 0.5; echo "Traceback: boom"; exit 3; fi; '
              'trap "echo stopped; exit 143" TERM; while :; do sleep 0.05; done')
    job = client.submit(JobSpec(argv=["sh", "-c", script], resources={"gpus": 1, "nodes": 2}))
    done = client.wait(job.id, timeout=60)[0]
    (attempt,) = done.attempts
    assert done.state is JobState.failed
    assert (attempt.outcome, attempt.exit_code, attempt.failure_class) == (AttemptOutcome.failed, 3, FailureClass.user)
    assert attempt.stop_reason == "member_failed" and "stopped" in client.log_path(job.id, rank=0).read_text()
    stop = next(e for e in client.events(job_id=job.id) if e.kind == "stop_requested")
    assert re.match(r"rank 1 on local-\d exited 3; stopping the other members", stop.reason)
    assert attempt.ended_at - stop.ts <= 1.0 + 2.0  # grace + 2 s


def test_logs_of_a_rank_the_job_lacks_are_refused(start_compute):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1)
    job = client.submit(JobSpec(argv=["true"], resources={"gpus": 1, "nodes": 2}))
    client.wait(job.id, timeout=60)
    try:
        client.log_path(job.id, rank=2)
    except Exception as err:
        assert "spans 2 node(s): rank must be 0-1, not 2" in str(err)
    else:
        raise AssertionError("rank 2 of a 2-node job has no log")


def test_a_gang_that_cannot_fit_waits_with_a_reason(start_compute):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=2)
    blocker = client.submit(JobSpec(argv=["sleep", "30"], resources={"gpus": 1}, preemptible=False))
    wait_until(lambda: client.get(blocker.id).state is JobState.running, what="blocker running")
    job = client.submit(JobSpec(argv=["true"], resources={"gpus": 2, "nodes": 2}))
    expected = r"needs 2 nodes with 2 free GPUs each; 1 has them \(local-\d\)"  # once both nodes passed NCCL checks
    wait_until(lambda: re.fullmatch(expected, client.get(job.id).waiting_reason or ""), what=expected)
    client.cancel(blocker.id)
    assert client.wait(job.id, timeout=60)[0].state is JobState.succeeded


def test_a_gang_hangs_when_one_member_stops_printing(start_compute):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1, grace_s=0.5)
    # rank 0 keeps printing; rank 1 prints once then goes silent, as a rank stuck in a collective would
    script = ('if [ "$AR_NODE_RANK" = 1 ]; then echo ready; exec sleep 60; fi; '
              'while :; do echo step; sleep 0.2; done')
    job = client.submit(JobSpec(argv=["sh", "-c", script], resources={"gpus": 1, "nodes": 2},
                                progress_timeout_s=1.5, time_limit_s=50))
    wait_until(lambda: any(a.stop_reason == "hang" and a.outcome is not None for a in client.get(job.id).attempts),
               timeout=40, what="the gang stopped as hung")
    attempt = next(a for a in client.get(job.id).attempts if a.stop_reason == "hang")
    assert (attempt.outcome, attempt.failure_class) == (AttemptOutcome.infra_failed, FailureClass.infra)
    assert "stopped as hung" in client.log_path(job.id, attempt=attempt.number, rank=1).read_text()
    client.cancel(job.id)
