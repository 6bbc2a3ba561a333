"""read_logs bounds and modes; fetch_metrics from MLflow and from parsed log lines; sync_metrics."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import pytest

from skills import ErrorCode, SkillContext
from skills.builtin import builtin_registry
from tests.skills.test_job_skills import call, wait_final
from tracking import JOB_TAG, RULES_LABEL, MetricRules, TrackingConfig, mlflow_client

LINES = 5000
NOISY = f"for i in range({LINES}): print(f'line {{i}} ' + ('error' if i % 100 == 0 else 'ok'))"


@pytest.fixture
def noisy_job(ctx: SkillContext, tmp_path: Path) -> str:
    job = call(ctx, "submit_job", argv=[sys.executable, "-c", NOISY], cwd=str(tmp_path)).job
    wait_final(ctx, job.id)
    return job.id


def test_tail_is_the_default_and_bounded(ctx: SkillContext, noisy_job: str) -> None:
    out = call(ctx, "read_logs", job_id=noisy_job)
    lines = out.text.split("\n")
    assert len(lines) == 100 and lines[-1] == f"line {LINES - 1} ok" and not out.truncated
    assert out.size_bytes > out.start_byte > 0 and out.attempt == 1

    small = SkillContext(ctx.home, ctx.tracking, max_output_bytes=3000, client_factory=lambda: ctx.client)
    out = builtin_registry().call("read_logs", {"job_id": noisy_job, "tail": 4000}, small)
    lines = out.text.split("\n")
    assert lines[0].startswith("[... ") and lines[0].endswith(" lines cut ...]")
    cut = int(lines[0].split()[1])
    assert cut + len(lines) - 1 == 4000 and lines[-1] == f"line {LINES - 1} ok"
    assert len(out.model_dump_json()) <= 3000


def test_byte_ranges_page_through_the_log(ctx: SkillContext, noisy_job: str) -> None:
    first = call(ctx, "read_logs", job_id=noisy_job, byte_start=0, byte_end=30)
    assert first.text == "line 0 error\nline 1 ok\nline 2 " and first.next_byte == 30
    second = call(ctx, "read_logs", job_id=noisy_job, byte_start=first.next_byte, byte_end=39)
    assert second.text == "ok\nline 3" and second.start_byte == 30
    rest, text = first, ""
    while rest.next_byte is not None:  # page through the whole file with the default range size
        rest = call(ctx, "read_logs", job_id=noisy_job, byte_start=rest.next_byte)
        assert len(rest.model_dump_json()) <= ctx.max_output_bytes
        text += rest.text
    assert (first.text + text).count("\n") == LINES


def test_grep_with_line_numbers_and_a_cut_marker(ctx: SkillContext, noisy_job: str) -> None:
    out = call(ctx, "read_logs", job_id=noisy_job, grep=r"error$", max_matches=3)
    assert out.matches == 50
    assert out.text.split("\n") == [
        "1: line 0 error",
        "101: line 100 error",
        "201: line 200 error",
        "[... 47 matching lines cut ...] (narrow the regex or page with byte_start)",
    ]


def test_read_logs_argument_errors(ctx: SkillContext, noisy_job: str, tmp_path: Path) -> None:
    bad_regex = call(ctx, "read_logs", job_id=noisy_job, grep="(unclosed")
    assert (bad_regex.error, bad_regex.field) == (ErrorCode.invalid_arguments, "grep")
    two_modes = call(ctx, "read_logs", job_id=noisy_job, tail=5, grep="x")
    assert two_modes.error is ErrorCode.invalid_arguments and "not tail and grep" in two_modes.message
    no_attempt = call(ctx, "read_logs", job_id=noisy_job, attempt=2)
    assert (no_attempt.error, no_attempt.field) == (ErrorCode.not_found, "attempt")
    hog = call(ctx, "submit_job", argv=["sleep", "60"], gpus=4, preemptible=False, cwd=str(tmp_path))
    call(ctx, "wait_for_jobs", job_ids=[hog.job.id], since={hog.job.id: "pending"}, timeout_s=60)
    blocked = call(ctx, "submit_job", argv=["true"], gpus=1, cwd=str(tmp_path)).job  # no free slot
    pending = call(ctx, "read_logs", job_id=blocked.id)
    assert pending.error is ErrorCode.not_found and f"job {blocked.id} is pending and has not started" in pending.message


TRAIN = """
import mlflow
with mlflow.start_run():  # MLFLOW_RUN_ID from the environment: logs into the job's run
    mlflow.log_param("lr", 0.01)
    for step in range(30):
        mlflow.log_metric("acc", step / 30, step=step)
for step in range(30):
    print(f"step: {step}")
    print(f"loss: {1 / (step + 1):.4f} | lr: 0.01")
"""


def test_a_job_tied_to_a_run_logs_into_it_and_its_printed_metrics_are_read(
    ctx: SkillContext, tracking: TrackingConfig, experiment_name: str, tmp_path: Path
) -> None:
    submitted = call(
        ctx, "submit_job", name="train", argv=[sys.executable, "-c", TRAIN], cwd=str(tmp_path),
        mlflow={"experiment": experiment_name, "run_name": "trial-1"},
    )  # fmt: skip
    run_id = submitted.mlflow_run_id
    assert run_id and submitted.job.labels["mlflow_run_id"] == run_id
    assert mlflow_client(tracking).get_run(run_id).data.tags[JOB_TAG] == submitted.job.id
    assert wait_final(ctx, submitted.job.id) == {submitted.job.id: "succeeded"}

    out = call(ctx, "fetch_metrics", job_id=submitted.job.id, max_points=5)
    assert out.run_id == run_id and out.run_name == "trial-1" and out.status == "FINISHED"
    assert out.params == {"lr": "0.01"} and out.from_log == ["loss", "lr"] and out.job_state == "succeeded"
    by_key = {m.key: m for m in out.metrics}
    assert sorted(by_key) == ["acc", "loss", "lr"]
    acc, loss = by_key["acc"], by_key["loss"]
    assert (acc.goal.value, acc.count, acc.latest.step, acc.best.value) == ("max", 30, 29, 29 / 30)
    assert (loss.goal.value, loss.count, loss.best.step, loss.best.value) == ("min", 30, 29, round(1 / 30, 4))
    assert [step for step, _ in acc.history] == [0, 7, 14, 22, 29]

    again = call(ctx, "fetch_metrics", job_id=submitted.job.id, keys=["loss", "val_loss"], maximize=["loss"])
    assert again.missing == ["val_loss"]
    assert again.metrics[0].count == 30 and again.metrics[0].best.step == 0  # maximized now
    assert sorted(mlflow_client(tracking).get_run(run_id).data.metrics) == ["acc"]  # the reads wrote nothing

    synced = call(ctx, "sync_metrics", job_id=submitted.job.id)
    assert (synced.log_points_added, synced.run_ended, synced.status) == (60, False, "FINISHED")
    assert call(ctx, "sync_metrics", job_id=submitted.job.id).log_points_added == 0  # each line once
    from_run = call(ctx, "fetch_metrics", job_id=submitted.job.id, keys=["loss"])
    assert from_run.from_log == [] and from_run.metrics[0].count == 30

    by_run = call(ctx, "fetch_metrics", run_id=run_id, keys=["acc"])
    assert by_run.metrics[0].latest.value == 29 / 30


def test_fetch_metrics_errors(ctx: SkillContext, tmp_path: Path) -> None:
    neither = call(ctx, "fetch_metrics")
    assert (neither.error, neither.field) == (ErrorCode.invalid_arguments, "run_id")
    missing_run = call(ctx, "fetch_metrics", run_id="0123456789abcdef")
    assert missing_run.error is ErrorCode.not_found and "tracking URI" in missing_run.message
    untied = call(ctx, "submit_job", argv=["true"], cwd=str(tmp_path)).job
    no_run = call(ctx, "fetch_metrics", job_id=untied.id)
    assert no_run.error is ErrorCode.not_found and "not tied to an MLflow run" in no_run.message
    no_sync = call(ctx, "sync_metrics", job_id=untied.id)
    assert no_sync.error is ErrorCode.not_found and "not tied to an MLflow run" in no_sync.message


def test_the_run_of_a_job_that_does_not_use_mlflow_ends_with_the_job(
    ctx: SkillContext, experiment_name: str, tmp_path: Path
) -> None:
    script = "print('step: 1 | loss: 0.5'); raise SystemExit(1)"
    job = call(ctx, "submit_job", argv=[sys.executable, "-c", script], cwd=str(tmp_path),
               mlflow={"experiment": experiment_name}).job  # fmt: skip
    assert call(ctx, "fetch_metrics", run_id=job.mlflow_run_id).status == "RUNNING"
    assert wait_final(ctx, job.id) == {job.id: "failed"}
    read = call(ctx, "fetch_metrics", job_id=job.id)
    assert (read.status, read.job_state, read.from_log) == ("RUNNING", "failed", ["loss"])  # a read ends nothing
    synced = call(ctx, "sync_metrics", job_id=job.id)
    assert (synced.log_points_added, synced.run_ended, synced.status) == (1, True, "FAILED")
    out = call(ctx, "fetch_metrics", job_id=job.id)
    assert out.status == "FAILED" and out.metrics[0].latest == out.metrics[0].best
    assert (out.metrics[0].key, out.metrics[0].latest.value, out.metrics[0].latest.step) == ("loss", 0.5, 1)


NANOGPT_JOB = Path(__file__).resolve().parents[1] / "autoresearch" / "runner" / "jobs" / "byo_job.py"


def test_fetch_metrics_reads_a_campaign_job_as_its_campaign_does_and_never_a_config_echo(
    ctx: SkillContext, experiment_name: str, tmp_path: Path
) -> None:
    """nanoGPT echoes its config file (`dropout = 0.2`, `batch_size = 64`, `n_layer = 6`): values that
    contradict the trial's own params. A campaign's job (its `metric_rules` label, as the runner sets
    it) is read with the campaign's patterns and `record`; any job's config lines are no metrics."""
    rules = MetricRules(
        patterns=(r"step (?P<step>\d+): train loss (?P<train_loss>[-+.\deE]+), val loss (?P<val_loss>[-+.\deE]+)",
                  r"iter (?P<iter>\d+): loss (?P<loss>[-+.\deE]+)"),
        record=frozenset({"val_loss", "loss"}), config_names=frozenset({"val_loss", "loss"}),
    )  # fmt: skip
    argv = [sys.executable, str(NANOGPT_JOB), "--format", "nanogpt", "--x", "0.5"]
    campaign_job = call(ctx, "submit_job", argv=argv, cwd=str(tmp_path), labels={RULES_LABEL: rules.model_dump_json()},
                        mlflow={"experiment": experiment_name}).job  # fmt: skip
    plain_job = call(ctx, "submit_job", argv=argv, cwd=str(tmp_path), mlflow={"experiment": experiment_name}).job
    wait_final(ctx, campaign_job.id)
    wait_final(ctx, plain_job.id)

    read = call(ctx, "fetch_metrics", job_id=campaign_job.id)
    assert read.from_log == ["loss", "val_loss"]  # recorded by the campaign; train_loss is not
    by_key = {m.key: m for m in read.metrics}
    assert [step for step, _ in by_key["val_loss"].history] == [1, 2, 3, 4]
    assert by_key["val_loss"].latest.value == 0.5
    assert call(ctx, "fetch_metrics", job_id=plain_job.id).from_log == []  # nanoGPT's lines are prose or config

    bad = call(ctx, "submit_job", argv=["true"], cwd=str(tmp_path), labels={RULES_LABEL: "{not json"},
               mlflow={"experiment": experiment_name}).job  # fmt: skip
    refused = call(ctx, "fetch_metrics", job_id=bad.id)
    assert refused.error is ErrorCode.invalid_arguments and "label metric_rules" in refused.message


def test_tail_and_grep_read_past_a_24_mb_line_in_bounded_memory(ctx: SkillContext, noisy_job: str) -> None:
    log = Path(ctx.client.log_path(noisy_job))
    with log.open("ab") as f:
        for _ in range(24):
            f.write(b"x" * (1 << 20))  # one 24 MB line (grep scans 32 MB at most)
        f.write(b"\nthe needle after it\n")
    tracemalloc.start()
    try:
        found = call(ctx, "read_logs", job_id=noisy_job, grep="needle")
        tail = call(ctx, "read_logs", job_id=noisy_job, tail=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found.matches == 1 and found.text == f"{LINES + 2}: the needle after it"
    assert tail.text == "the needle after it"
    assert peak < 12 << 20  # the line was read in 1 MiB pieces, never whole
