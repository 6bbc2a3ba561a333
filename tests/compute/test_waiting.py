"""`waiting_reason`: the scheduling pass that leaves a job waiting says why (pure), and the daemon
stores it for the Client, the CLI and the skills (real daemon)."""

from __future__ import annotations

import json
import time

from click.testing import CliRunner

from autoresearch.cli import app
from compute import Client, JobSpec, JobState
from compute.scheduler import NodeView, PendingJob, RunningAttempt, schedule
from compute.waiting import WaitKind, describe, earliest_free
from skills import SkillContext
from skills.builtin import builtin_registry


def _why(pending, running, nodes, now=1000.0):
    decision = schedule(pending, running, nodes, now)
    return {job_id: describe(entry) for job_id, entry in decision.waiting.items()}, decision


def test_each_rule_that_keeps_a_job_waiting_names_itself() -> None:
    nodes = [NodeView("local-0", (0, 1, 2, 3)), NodeView("local-1", (4, 5, 6, 7))]
    busy = [RunningAttempt("r0", 1, "local-0", (0, 1), 50, False, 0.0),
            RunningAttempt("r1", 1, "local-1", (4, 5), 50, False, 0.0)]
    why, decision = _why([PendingJob("big", 50, 4, 1, 1000.0), PendingJob("small", 50, 2, 2, 1000.0)], busy, nodes)
    assert decision.start == [] or [p.job_id for p in decision.start] == ["small"]
    assert why["big"].text == "needs 4 GPUs on one node; the largest free block is 2 (local-0)"
    assert (why["big"].kind, why["big"].position) == (WaitKind.no_fit, 1)

    why, _ = _why([PendingJob("big", 50, 4, 1, 1000.0), PendingJob("later", 40, 2, 2, 1000.0)],
                  busy[:1], [NodeView("local-0", (0, 1, 2, 3))])
    assert why["later"].text == "held for big (reservation)" and why["later"].kind is WaitKind.reservation

    why, _ = _why([PendingJob("a", 50, 4, 1, 1000.0), PendingJob("b", 50, 4, 2, 1000.0),
                   PendingJob("c", 50, 4, 3, 1000.0)], [], [NodeView("local-0", (0, 1, 2, 3))])
    assert why["c"].text == "behind 1 higher-priority job(s)" and why["c"].position == 2

    cordoned = [NodeView("local-0", (0, 1, 2, 3), False, "cordoned")]
    why, _ = _why([PendingJob("j", 50, 1, 1, 1000.0)], [], cordoned)
    assert why["j"].text == "node local-0 is cordoned" and why["j"].kind is WaitKind.node_unavailable
    why, _ = _why([PendingJob("huge", 50, 8, 1, 1000.0)], [], nodes)
    assert why["huge"].text == "needs 8 GPUs on one node; the largest node taking work has 4"
    shy = PendingJob("shy", 50, 4, 1, 1000.0, frozenset({"local-0", "local-1"}))
    why, _ = _why([shy], [], nodes)
    assert why["shy"].kind is WaitKind.excluded and why["shy"].text.startswith("excluded from local-0, local-1")

    low = [RunningAttempt("low", 1, "local-0", (0, 1, 2, 3), 10, True, 0.0)]
    why, decision = _why([PendingJob("urgent", 90, 4, 1, 1000.0)], low, [NodeView("local-0", (0, 1, 2, 3))])
    assert [p.job_id for p in decision.preempt] == ["low"]
    assert why["urgent"].text == "preempting 1 lower-priority attempt(s) on local-0"
    stopping = [RunningAttempt("low", 1, "local-0", (0, 1, 2, 3), 10, True, 0.0, stopping=True)]
    why, _ = _why([PendingJob("urgent", 90, 4, 1, 1000.0)], stopping, [NodeView("local-0", (0, 1, 2, 3))])
    assert why["urgent"].text == "waiting for stopping attempts to free local-0"


def test_earliest_free_block_from_time_limits() -> None:
    sizes, free = {"a": 4, "b": 4}, {"a": 1, "b": 0}
    running = [("a", 2, 50.0), ("a", 1, None), ("b", 4, 80.0)]
    out = earliest_free(running, free, sizes)
    assert out[1] == 0.0 and out[3] == 50.0  # a: 1 free now, 2 more at 50
    assert out[4] == 80.0  # a never frees its 4th slot (no time limit); b frees all four at 80


def test_the_daemon_stores_why_and_every_interface_shows_it(start_compute, tracking) -> None:
    client = start_compute(gpus=1)  # one slot, no multi-GPU NCCL check in the way
    holder = client.submit(JobSpec(argv=["sleep", "30"], resources={"gpus": 1}, time_limit_s=60))
    _until(client, holder.id, lambda j: j.state == JobState.running)
    waiting = client.submit(JobSpec(argv=["true"], resources={"gpus": 1}, name="waits"))
    job = _until(client, waiting.id, lambda j: j.waiting_reason is not None)
    assert job.waiting_reason == "needs 1 GPU on one node; no GPU slot is free"
    assert job.queue_position == 1 and job.waiting_kind is WaitKind.no_fit
    started = client.get(holder.id).attempts[0].started_at
    assert abs(job.estimated_start - (started + 60)) < 1e-6  # the holder's time limit ends then

    env = {"AUTORESEARCH_HOME": str(client.home)}
    shown = json.loads(CliRunner().invoke(app, ["jobs", "status", waiting.id, "--json"], env=env).stdout)
    assert (shown["waiting_reason"], shown["queue_position"]) == (job.waiting_reason, 1)
    listed = CliRunner().invoke(app, ["jobs", "list"], env=env, terminal_width=60).stdout
    assert waiting.id in listed and holder.id in listed  # full ids even at 60 columns
    status = CliRunner().invoke(app, ["jobs", "status", waiting.id], env=env).stdout
    assert f"waiting: {job.waiting_reason}; queue position 1" in status
    ctx = SkillContext(home=client.home, tracking=tracking, client_factory=lambda: client)
    viewed = builtin_registry().call("job_status", {"job_id": waiting.id}, ctx)
    assert viewed.job.waiting_reason == job.waiting_reason and viewed.job.queue_position == 1

    client.cancel(holder.id)
    done = client.wait(waiting.id, timeout=60)[0]
    assert done.state == JobState.succeeded and done.waiting_reason is None


def test_a_cordoned_node_and_a_retry_backoff_are_named(compute_client: Client) -> None:
    client = compute_client
    client.cordon("local", "maintenance")
    job = client.submit(JobSpec(argv=["true"], resources={"gpus": 1}))
    assert _until(client, job.id, lambda j: j.waiting_reason is not None).waiting_reason == "node local is cordoned"
    client.uncordon("local", timeout=60)
    client.wait(job.id, timeout=60)
    flaky = client.submit(JobSpec(argv=["sh", "-c", "exit 3"], max_retries=1, retry_backoff_s=600))
    backing = _until(client, flaky.id, lambda j: j.waiting_reason is not None and j.attempts)
    assert backing.waiting_reason.endswith("(retry backoff)") and backing.waiting_reason.startswith("not before ")
    assert backing.queue_position == 0


def _until(client: Client, job_id: str, ok, timeout: float = 120.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        job = client.get(job_id)
        if ok(job):
            return job
        time.sleep(0.1)
    raise AssertionError(f"{job_id} never got there: {client.get(job_id)}")


def test_client_queue_lists_pending_jobs_in_the_daemons_order_a_page_at_a_time(compute_client: Client) -> None:
    blocker = compute_client.submit(JobSpec(name="all-gpus", argv=["sleep", "60"], resources={"gpus": 4}))
    deadline = time.monotonic() + 60
    while compute_client.get(blocker.id).state is not JobState.running and time.monotonic() < deadline:
        time.sleep(0.05)
    ids = [compute_client.submit(JobSpec(name=f"w{p}", argv=["true"], priority=p, resources={"gpus": 1})).id
           for p in (10, 90, 50, 90)]  # fmt: skip
    while any(compute_client.get(i).queue_position is None for i in ids) and time.monotonic() < deadline:
        time.sleep(0.05)
    first, second = compute_client.queue(limit=2), compute_client.queue(limit=2, offset=2)
    assert [j.id for j in first + second] == [ids[1], ids[3], ids[2], ids[0]]  # priority, then FIFO
    assert [j.queue_position for j in first + second] == [1, 2, 3, 4]
    assert compute_client.queue(limit=2, offset=4) == []
    compute_client.cancel(blocker.id)
