"""The bug of issue 14: the LLM's `fetch_metrics` wrote a job's printed metrics into its run, after
which a campaign with `objective.source: auto` read MLflow and completed the trial with the
stale value of the step the tool had seen. The model's read tools never write."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from autoresearch.policy.agent_skills import READ_TOOLS, agent_registry
from compute import Job
from skills import SkillContext
from tracking import MetricReader, MetricSource, MlflowTracker, QueuedTracker

SCRIPT = """
import pathlib, sys, time
go = pathlib.Path(sys.argv[1])
for step in range(1, 6):
    print(f"step: {step} | objective: {10 - step}", flush=True)
    if step == 2:
        while not go.exists():
            time.sleep(0.05)
"""


def _printed(ctx: SkillContext, job_id: str, text: bytes) -> Job:
    for _ in range(600):
        job = ctx.client.get(job_id)
        log = Path(job.attempts[0].log_path) if job.attempts else None
        if log is not None and log.is_file() and text in log.read_bytes():
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never printed {text!r}")


def test_fetch_metrics_offered_to_the_model_leaves_the_run_alone_and_auto_reads_the_final_value(
    ctx: SkillContext, experiment_name: str, tmp_path: Path
) -> None:
    agent = agent_registry()
    assert "fetch_metrics" in READ_TOOLS and "sync_metrics" not in READ_TOOLS  # the writing variant is not offered
    assert "sync" not in str(agent.get("fetch_metrics").tooldef.parameters)  # no option to write either
    go = tmp_path / "go"
    submitted = agent.call(
        "submit_job",
        {"argv": [sys.executable, "-c", SCRIPT, str(go)], "cwd": str(tmp_path), "mlflow": {"experiment": experiment_name}},
        ctx,
    )
    run_id, job_id = submitted.mlflow_run_id, submitted.job.id
    tracker = MlflowTracker(ctx.tracking)
    tags_before = tracker.get_run(run_id).tags
    _printed(ctx, job_id, b"step: 2")

    seen = agent.call("fetch_metrics", {"job_id": job_id}, ctx)  # what the model calls while the trial runs
    (objective,) = seen.metrics
    assert (objective.key, objective.latest.step, objective.latest.value) == ("objective", 2, 8.0)
    assert seen.from_log == ["objective"] and seen.status == "RUNNING" and seen.job_state == "running"
    run = tracker.get_run(run_id)
    assert run.metrics == {} and run.tags == tags_before  # nothing written: no points, no parser state

    go.touch()
    ctx.client.wait(job_id)
    queued = QueuedTracker(tracker, on_error=print)
    values = MetricReader(queued, "objective", MetricSource.auto).read(0, run_id, ctx.client.get(job_id), final=True)
    queued.close()
    assert values[-1] == (5, 5.0)  # the final value, not the step the tool saw
    assert [m.step for m in tracker.metric_history(run_id, "objective")] == [1, 2, 3, 4, 5]  # logged once, by the reader
