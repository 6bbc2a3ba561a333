"""The compute skills against a real daemon running real subprocesses."""

from __future__ import annotations

import sys
from pathlib import Path

from compute import detect_gpus
from skills import ErrorCode, SkillContext, SkillError
from skills.builtin import builtin_registry
from tracking import mlflow_client

SKILLS = builtin_registry()


def call(ctx: SkillContext, skill: str, **arguments: object):  # noqa: ANN201 - the skill's output model
    return SKILLS.call(skill, arguments, ctx)


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def wait_final(ctx: SkillContext, job_id: str) -> dict[str, str]:
    states: dict[str, str] = {}
    for _ in range(60):
        out = call(ctx, "wait_for_jobs", job_ids=[job_id], timeout_s=10)
        states = {k: v.value for k, v in out.states.items()}
        if out.all_final:
            return states
    raise AssertionError(f"{job_id} did not finish: {states}")


def test_submit_status_wait_and_list(ctx: SkillContext, tmp_path: Path) -> None:
    ok = call(ctx, "submit_job", name="ok", argv=py("print('hi')"), cwd=str(tmp_path), labels={"trial": "1"})
    bad = call(ctx, "submit_job", name="bad", argv=py("import sys; sys.exit(3)"), cwd=str(tmp_path), priority="high",
               labels={"trial": "2"})  # fmt: skip
    assert ok.job.id.startswith("job-") and ok.existing is False
    assert bad.job.priority == 75 and bad.job.priority_class == "high"
    assert wait_final(ctx, ok.job.id) == {ok.job.id: "succeeded"}
    assert wait_final(ctx, bad.job.id) == {bad.job.id: "failed"}

    status = call(ctx, "job_status", job_id=bad.job.id)
    assert status.job.exit_code == 3 and status.job.failure_class.value == "user"
    assert [a.number for a in status.attempt_history] == [1]
    assert status.argv == py("import sys; sys.exit(3)")

    assert [j.id for j in call(ctx, "list_jobs").jobs] == [bad.job.id, ok.job.id]  # newest first
    assert [j.id for j in call(ctx, "list_jobs", states=["failed"]).jobs] == [bad.job.id]
    assert [j.id for j in call(ctx, "list_jobs", labels={"trial": "1"}).jobs] == [ok.job.id]
    assert [j.id for j in call(ctx, "list_jobs", min_priority=60).jobs] == [bad.job.id]
    page = call(ctx, "list_jobs", limit=1)
    assert [j.id for j in page.jobs] == [bad.job.id] and page.next_offset == 1
    page = call(ctx, "list_jobs", limit=1, offset=page.next_offset)
    assert [j.id for j in page.jobs] == [ok.job.id] and page.next_offset is None


def test_unknown_ids_and_bad_arguments_are_typed_errors(ctx: SkillContext, tmp_path: Path) -> None:
    out = call(ctx, "job_status", job_id="abc")
    assert isinstance(out, SkillError)
    assert (out.error, out.field) == (ErrorCode.not_found, "job_id")
    assert out.message == "no job 'abc'. Job ids look like job-3f9a2c1b7d; list_jobs shows them"
    assert call(ctx, "wait_for_jobs", job_ids=["job-0000000000"], timeout_s=1).field == "job_ids"

    too_many = call(ctx, "submit_job", argv=["true"], gpus=100)
    assert (too_many.error, too_many.field) == (ErrorCode.invalid_arguments, "gpus")
    no_node = call(ctx, "submit_job", argv=["true"], gpus=8, cwd=str(tmp_path))
    assert no_node.error is ErrorCode.failed and "largest node" in no_node.message
    shell_string = call(ctx, "submit_job", argv="echo hi")
    assert shell_string.error is ErrorCode.invalid_arguments and "shell" in shell_string.message
    missing = SKILLS.call("submit_job", {}, ctx)
    assert (missing.error, missing.field) == (ErrorCode.invalid_arguments, "argv")
    assert call(ctx, "list_jobs", states=["sleeping"]).field == "states.0"


def test_submit_job_with_progress_timeout_stops_a_silent_attempt_as_hung(ctx: SkillContext, tmp_path: Path) -> None:
    script = 'echo started; if [ "$AR_ATTEMPT" = 1 ]; then sleep 60; fi'
    job = call(ctx, "submit_job", argv=["sh", "-c", script], cwd=str(tmp_path), progress_timeout_s=1).job
    assert wait_final(ctx, job.id) == {job.id: "succeeded"}
    status = call(ctx, "job_status", job_id=job.id)
    hung, second = status.attempt_history
    assert (hung.outcome.value, hung.failure_class.value, hung.stop_reason) == ("infra_failed", "infra", "hang")
    assert second.outcome.value == "succeeded"
    for bad in (0, -5, True, "ten", "0"):  # "10" would be read as 10 (skills/arguments.py)
        refused = call(ctx, "submit_job", argv=["true"], progress_timeout_s=bad)
        assert (refused.error, refused.field) == (ErrorCode.invalid_arguments, "progress_timeout_s"), bad


def test_cancel_and_wait_for_change(ctx: SkillContext, tmp_path: Path) -> None:
    job = call(ctx, "submit_job", argv=py("import time; time.sleep(120)"), cwd=str(tmp_path)).job
    started = call(ctx, "wait_for_jobs", job_ids=[job.id], since={job.id: "pending"}, timeout_s=60)
    assert started.states == {job.id: "running"} and not started.timed_out
    quiet = call(ctx, "wait_for_jobs", job_ids=[job.id], timeout_s=0.3)
    assert quiet.timed_out and quiet.changed == [] and quiet.states == {job.id: "running"}

    cancelled = call(ctx, "cancel_job", job_id=job.id, reason="test over")
    assert cancelled.already_final is False
    assert wait_final(ctx, job.id) == {job.id: "cancelled"}
    again = call(ctx, "cancel_job", job_id=job.id)
    assert again.already_final is True and again.job.state.value == "cancelled"


def test_cluster_status_counts_slots_and_queue(ctx: SkillContext, tmp_path: Path) -> None:
    sleep = py("import time; time.sleep(120)")
    running = call(ctx, "submit_job", argv=sleep, gpus=3, preemptible=False, cwd=str(tmp_path)).job
    call(ctx, "wait_for_jobs", job_ids=[running.id], since={running.id: "pending"}, timeout_s=60)
    call(ctx, "submit_job", argv=sleep, gpus=2, priority="high", cwd=str(tmp_path))
    call(ctx, "submit_job", argv=sleep, gpus=4, priority=10, cwd=str(tmp_path))

    status = call(ctx, "cluster_status")
    assert (status.gpus_total, status.gpus_used, status.gpus_free) == (4, 3, 1)
    assert [(n.name, n.gpus_used, n.running_jobs, n.health.value) for n in status.nodes] == [("local", 3, 1, "ok")]
    assert status.nodes[0].virtual is (len(detect_gpus()) < 4)  # 4 slots with no GPU behind them (no GPU here): virtual
    assert (status.running, status.pending, status.pending_gpus) == (1, 2, 6)
    assert status.pending_by_priority == {"high": 1, "idle+10": 1}


def test_list_output_is_bounded(ctx: SkillContext, tmp_path: Path) -> None:
    for i in range(12):
        call(ctx, "submit_job", name=f"j{i}", argv=["true"], cwd=str(tmp_path), labels={"note": "x" * 100})
    small = SkillContext(ctx.home, ctx.tracking, max_output_bytes=2000, client_factory=lambda: ctx.client)
    out = call(small, "list_jobs", limit=12)
    assert out.truncated and len(out.model_dump_json()) <= 2000
    assert "jobs: " in out.truncation and "items cut" in out.truncation
    assert out.next_offset is None  # paging information is kept: all 12 fit on one page before the cut
    assert len(out.jobs) < 12


def test_idempotent_submit_returns_the_first_job_and_its_run(
    ctx: SkillContext, experiment_name: str, tmp_path: Path
) -> None:
    tied = {"experiment": experiment_name}
    first = call(ctx, "submit_job", argv=["true"], cwd=str(tmp_path), idempotency_key="trial-7", mlflow=tied)
    second = call(ctx, "submit_job", argv=["true"], cwd=str(tmp_path), idempotency_key="trial-7", mlflow=tied)
    assert second.job.id == first.job.id and (first.existing, second.existing) == (False, True)
    assert second.mlflow_run_id == first.mlflow_run_id
    refused = call(ctx, "submit_job", argv=["true"], cwd=str(tmp_path / "nowhere"), mlflow=tied)
    assert refused.error is ErrorCode.failed and "not a directory" in refused.message
    runs = mlflow_client(ctx.tracking).search_runs([first.mlflow_experiment_id])  # the runs made for the 2nd and 3rd are deleted
    assert [run.info.run_id for run in runs] == [first.mlflow_run_id]


def test_submit_job_takes_a_project_and_refuses_one_that_does_not_exist(ctx: SkillContext, tmp_path: Path) -> None:
    ctx.client.set_project("vision", 1)
    out = call(ctx, "submit_job", name="v", argv=py("print('hi')"), cwd=str(tmp_path), project="vision")
    assert ctx.client.get(out.job.id).spec.project == "vision"
    refused = call(ctx, "submit_job", name="x", argv=py("print('hi')"), cwd=str(tmp_path), project="nope")
    assert isinstance(refused, SkillError) and "project 'nope' does not exist" in refused.message
