"""A whole campaign on the synthetic job: trials, jobs, MLflow runs, status, report, rerun."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from autoresearch import api
from autoresearch.campaign import CampaignState, Ledger, TrialFailure, TrialState, campaign_dir
from autoresearch.cli import _register, app
from autoresearch.runner import run_campaign
from tracking import JOB_TAG, SOURCE_TAG, mlflow_client
from tests.autoresearch.runner.conftest import FAST, campaign_jobs, campaign_of, synthetic_config, write_config

_register()
cli = CliRunner()


def test_a_campaign_runs_its_budget_with_one_job_and_one_mlflow_run_per_trial(compute_client, tracking, tmp_path):
    data = synthetic_config(tracking, budget={"max_trials": 5, "max_parallel": 2})
    outcome = run_campaign(campaign_of(data), settings=FAST)

    assert outcome.state is CampaignState.completed
    assert "max_trials (5)" in outcome.reason
    trials = outcome.status.trials
    assert [t.state for t in trials] == [TrialState.complete] * 5
    jobs = {j.id: j for j in campaign_jobs(compute_client, data["name"])}
    assert sorted(jobs) == sorted(t.job_id for t in trials)
    assert all(j.state.value == "succeeded" for j in jobs.values())

    mlflow = mlflow_client(tracking)
    for t in trials:
        run = mlflow.get_run(t.mlflow_run_id)
        assert run.data.tags["autoresearch.campaign"] == data["name"]
        assert run.data.tags["autoresearch.trial"] == str(t.number)
        assert run.data.tags[JOB_TAG] == t.job_id
        assert run.data.tags[SOURCE_TAG] == "log"  # the job ran with --no-mlflow: values parsed from its log
        assert run.data.params == {"x1": str(t.params["x1"]), "x2": str(t.params["x2"])}
        history = mlflow.get_metric_history(t.mlflow_run_id, "objective")
        assert sorted(m.step for m in history) == [1, 2, 3, 4, 5]
        last = max(history, key=lambda m: m.step).value
        assert t.value == last
        assert run.info.status == "FINISHED"
        assert jobs[t.job_id].spec.env["MLFLOW_RUN_ID"] == t.mlflow_run_id
    experiment = mlflow.get_experiment_by_name(data["name"])
    assert len(mlflow.search_runs([experiment.experiment_id])) == 5


def test_compute_progress_timeout_reaches_each_trials_job(compute_client, tracking):
    data = synthetic_config(tracking, budget={"max_trials": 1, "max_parallel": 1}, compute={"progress_timeout_s": 45})
    outcome = run_campaign(campaign_of(data), settings=FAST)
    assert outcome.state is CampaignState.completed
    [job] = campaign_jobs(compute_client, data["name"])
    assert job.spec.progress_timeout_s == 45 and len(job.attempts) == 1  # a job that prints is never stopped


def test_status_report_and_rerunning_a_completed_campaign(compute_client, tracking, tmp_path):
    data = synthetic_config(tracking, budget={"max_trials": 3, "max_parallel": 3})
    config = write_config(tmp_path, data)
    name = data["name"]
    api.run(config, settings=FAST)

    shown = cli.invoke(app, ["status", name, "--json"])
    assert shown.exit_code == 0, shown.output
    status = json.loads(shown.stdout)
    assert status["name"] == name and status["state"] == "completed"
    assert status["budget_used"]["trials"] == 3
    best = status["best_trial"]
    assert best["value"] == min(t["value"] for t in status["trials"])
    for t in status["trials"]:
        assert set(t) == {"number", "state", "params", "value", "job_id", "mlflow_run_id", "failure_class", "reason",
                          "confirms", "mean", "sd", "n", "suspect", "suspect_reason", "nodes", "suspect_rerun_of",
                          "waiting_reason"}
        assert t["job_id"].startswith("job-") and t["mlflow_run_id"]
        assert t["suspect"] is False and t["nodes"] == ["local"]  # where it ran; a healthy node at full speed
        assert t["failure_class"] is None and t["reason"] is None and t["waiting_reason"] is None
    assert "max_trials (3) reached" in status["state_reason"]

    listed = cli.invoke(app, ["status", "--json"])
    assert [c["name"] for c in json.loads(listed.stdout)] == [name]
    assert json.loads(listed.stdout)[0]["runner_pid"] is None

    written = cli.invoke(app, ["report", name, "--out", str(tmp_path / "rep")])
    assert written.exit_code == 0, written.output
    assert (tmp_path / "rep" / "report.md").read_text().startswith(f"# Campaign report: {name}")
    assert (tmp_path / "rep" / "best_by_trial.png").stat().st_size > 0
    default = cli.invoke(app, ["report", name])
    assert default.exit_code == 0 and (compute_client.home / "campaigns" / name / "report" / "report.md").is_file()

    again = cli.invoke(app, ["run", str(config), "--quiet"])
    assert again.exit_code == 0, again.output
    assert "already completed" in again.stdout and "raise budget.max_trials" in again.stdout
    assert len(campaign_jobs(compute_client, name)) == 3

    more = cli.invoke(app, ["run", str(config), "--quiet", "--max-trials", "4"])
    assert more.exit_code == 0, more.output
    assert api.status(name).budget_used.trials == 4
    assert len(campaign_jobs(compute_client, name)) == 4


def test_failures_keep_their_class_and_log_and_a_silent_job_fails_no_metric(compute_client, tracking):
    crashing = synthetic_config(tracking, extra=("--no-mlflow", "--fail-prob", "1"),
                                budget={"max_trials": 2, "max_parallel": 2})  # fmt: skip
    outcome = run_campaign(campaign_of(crashing), settings=FAST)
    assert [t.state for t in outcome.status.trials] == [TrialState.failed] * 2
    failed = Ledger.load(crashing["name"]).trials()
    assert {t.failure_class for t in failed} == {TrialFailure.user}
    assert all("injected fault" in (t.log_excerpt or "") for t in failed)

    silent = synthetic_config(tracking, budget={"max_trials": 1, "max_parallel": 1})
    silent["command"] = ["python", "-c", "print('hello {x1} {x2}')"]
    run_campaign(campaign_of(silent), settings=FAST)
    (trial,) = Ledger.load(silent["name"]).trials()
    assert trial.failure_class is TrialFailure.no_metric
    assert "never reported 'objective'" in trial.log_excerpt and "hello" in trial.log_excerpt


def test_a_job_that_logs_to_mlflow_itself_is_read_from_mlflow(compute_client, tracking):
    data = synthetic_config(tracking, extra=(), budget={"max_trials": 1, "max_parallel": 1})
    outcome = run_campaign(campaign_of(data), settings=FAST)
    (trial,) = outcome.status.trials
    assert trial.state is TrialState.complete
    mlflow = mlflow_client(tracking)
    run = mlflow.get_run(trial.mlflow_run_id)
    assert run.data.tags[SOURCE_TAG] == "mlflow"
    history = mlflow.get_metric_history(trial.mlflow_run_id, "objective")
    assert sorted(m.step for m in history) == [1, 2, 3, 4, 5]  # logged once, by the job
    assert trial.value == max(history, key=lambda m: m.step).value


def test_a_campaign_started_over_under_the_same_name_gets_new_jobs(compute_client, tracking, tmp_path):
    data = synthetic_config(tracking, budget={"max_trials": 2, "max_parallel": 2})
    first = run_campaign(campaign_of(data), settings=FAST).status.trials
    folder = campaign_dir(data["name"])
    identity = Ledger.load(data["name"]).identity
    for t in first:  # every trial checkpoints into the campaign's folder, under its ledger's identity
        assert compute_client.get(t.job_id).checkpoint_dir == str(folder / "checkpoints" / identity / f"trial-{t.number}")
    shutil.rmtree(folder)  # the campaign is deleted; compute still knows its jobs

    again = run_campaign(campaign_of(data), settings=FAST)
    assert again.state is CampaignState.completed
    trials = again.status.trials
    assert [t.state for t in trials] == [TrialState.complete] * 2
    assert not {t.job_id for t in trials} & {t.job_id for t in first}  # new jobs, not the old campaign's
    assert len(campaign_jobs(compute_client, data["name"])) == 4
    ledger = Ledger.load(data["name"])
    assert [compute_client.get(t.job_id).spec.idempotency_key for t in trials] == [
        ledger.idempotency_key(t.number) for t in trials]
    assert ledger.identity != identity  # new folders too: no old checkpoint for the new trial 0


def test_the_runner_reads_a_job_back_only_when_its_wait_says_it_changed(compute_client, tracking, monkeypatch):
    """The evaluator keeps the job states it saw across rounds, and the launch records the job it
    submitted: a job's state comes from `wait_for_change`, never from one `get` per running trial
    per round (before: about 4 reads per trial at 4 slots, one of them between a job's end and
    the next submit)."""
    from compute import Client

    gets: list[str] = []
    real_get = Client.get
    monkeypatch.setattr(Client, "get", lambda self, job_id: gets.append(job_id) or real_get(self, job_id))
    data = synthetic_config(tracking, budget={"max_trials": 8, "max_parallel": 4})
    outcome = run_campaign(campaign_of(data), settings=FAST)
    assert [t.state for t in outcome.status.trials] == [TrialState.complete] * 8
    campaign_job_ids = {t.job_id for t in outcome.status.trials}
    assert not campaign_job_ids & set(gets), gets
