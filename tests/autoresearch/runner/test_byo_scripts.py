"""Scripts we did not write, through real campaigns: values, steps, and exactly the metrics asked for."""

from __future__ import annotations

import math
from pathlib import Path

import optuna

from autoresearch.campaign import CampaignState, Ledger, TrialState
from autoresearch.runner import run_campaign
from skills import SkillContext, builtin_registry
from tests.autoresearch.runner._byo import NANOGPT_PATTERNS, byo_config, campaign_of, last_val_loss
from tests.autoresearch.runner.conftest import FAST
from tracking import SOURCE_TAG, mlflow_client

HF_TRAIN = {"loss", "grad_norm", "learning_rate", "epoch"}
HF_EVAL = {"eval_loss", "eval_runtime", "eval_samples_per_second", "eval_steps_per_second"}
HF_SUMMARY = {"train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss"}


def _runs(tracking, trials):
    mlflow = mlflow_client(tracking)
    return mlflow, [mlflow.get_run(t.mlflow_run_id) for t in trials]


def test_a_nanogpt_log_through_patterns_records_its_losses_at_their_steps_and_no_config_echo(compute_client, tracking):
    data = byo_config(tracking, "nanogpt", metrics={"patterns": NANOGPT_PATTERNS})
    outcome = run_campaign(campaign_of(data), settings=FAST)

    assert outcome.state is CampaignState.completed
    mlflow, runs = _runs(tracking, outcome.status.trials)
    ctx = SkillContext(home=compute_client.home, tracking=tracking, client_factory=lambda: compute_client)
    for trial, run in zip(outcome.status.trials, runs):
        assert trial.state is TrialState.complete
        assert trial.value == last_val_loss(trial.params["x"], 4)
        assert set(run.data.metrics) == {"val_loss", "train_loss", "loss"}  # no batch_size, dropout, n_layer ...
        assert sorted(m.step for m in mlflow.get_metric_history(run.info.run_id, "val_loss")) == [1, 2, 3, 4]
        assert sorted(m.step for m in mlflow.get_metric_history(run.info.run_id, "loss")) == [1, 2, 3, 4]
        assert run.data.tags[SOURCE_TAG] == "log"
        assert not [tag for tag in run.data.tags if tag.startswith("autoresearch.log_parser")]  # no parser state

        read = builtin_registry().call("fetch_metrics", {"job_id": trial.job_id}, ctx)  # what the agent reads
        assert {m.key for m in read.metrics} == {"val_loss", "train_loss", "loss"} and read.from_log == []
        assert read.params == run.data.params


def test_record_narrows_what_a_run_records(compute_client, tracking):
    data = byo_config(tracking, "nanogpt", budget={"max_trials": 1, "max_parallel": 1},
                      metrics={"patterns": NANOGPT_PATTERNS, "record": ["train_loss"]})  # fmt: skip
    outcome = run_campaign(campaign_of(data), settings=FAST)
    _, runs = _runs(tracking, outcome.status.trials)
    assert set(runs[0].data.metrics) == {"val_loss", "train_loss"}  # the objective, plus record


def test_hf_trainer_dict_lines_record_every_named_metric_by_default(compute_client, tracking):
    data = byo_config(tracking, "hf", objective={"metric": "eval_loss"})
    outcome = run_campaign(campaign_of(data), settings=FAST)

    mlflow, runs = _runs(tracking, outcome.status.trials)
    for trial, run in zip(outcome.status.trials, runs):
        assert trial.state is TrialState.complete and trial.value == last_val_loss(trial.params["x"], 4)
        assert set(run.data.metrics) == {"loss", "grad_norm", "learning_rate", "epoch", "eval_loss", "eval_runtime"}
        assert sorted(m.step for m in mlflow.get_metric_history(run.info.run_id, "eval_loss")) == [0, 1, 2, 3]


def test_a_transformers_5_trainer_log_is_read_and_its_study_names_the_metric(compute_client, tracking):
    """transformers 5.x prints its numbers as quoted strings, after tqdm bars on the same log line."""
    data = byo_config(tracking, "hf5", objective={"metric": "eval_loss"})
    outcome = run_campaign(campaign_of(data), settings=FAST)

    assert outcome.state is CampaignState.completed
    mlflow, runs = _runs(tracking, outcome.status.trials)
    for trial, run in zip(outcome.status.trials, runs):
        assert trial.state is TrialState.complete
        assert trial.value == float(f"{last_val_loss(trial.params['x'], 4):.4g}")
        assert set(run.data.metrics) == HF_TRAIN | HF_EVAL | HF_SUMMARY  # every named metric, by default
        assert sorted(m.step for m in mlflow.get_metric_history(run.info.run_id, "eval_loss")) == [0, 1, 2, 3]
        assert [m.value for m in mlflow.get_metric_history(run.info.run_id, "epoch")][:4] == [0.5, 1.0, 1.0, 1.5]
    ledger = Ledger.load(data["name"])
    study = optuna.load_study(study_name=data["name"], storage=ledger.storage_url)  # what optuna-dashboard opens
    assert study.metric_names == ["eval_loss"]


def test_bracket_lines_through_a_pattern(compute_client, tracking):
    pattern = r"^\[(?P<epoch>\d+)/\d+\] val loss (?P<val_loss>[-+.\deE]+)"
    data = byo_config(tracking, "bracket", metrics={"patterns": [pattern]})
    outcome = run_campaign(campaign_of(data), settings=FAST)

    mlflow, runs = _runs(tracking, outcome.status.trials)
    for trial, run in zip(outcome.status.trials, runs):
        assert trial.state is TrialState.complete and trial.value == last_val_loss(trial.params["x"], 4)
        assert sorted(m.step for m in mlflow.get_metric_history(run.info.run_id, "val_loss")) == [1, 2, 3, 4]


def test_a_script_that_logs_to_mlflow_itself_is_read_from_mlflow_and_its_prose_is_not_parsed(compute_client, tracking):
    data = byo_config(tracking, "mlflow", budget={"max_trials": 1, "max_parallel": 1})
    outcome = run_campaign(campaign_of(data), settings=FAST)

    trial = outcome.status.trials[0]
    mlflow, runs = _runs(tracking, [trial])
    assert trial.state is TrialState.complete
    assert math.isclose(trial.value, trial.params["x"] ** 2 + 0.25)  # the logged float, not a rounded print
    assert runs[0].data.tags[SOURCE_TAG] == "mlflow"
    assert set(runs[0].data.metrics) == {"val_loss"}
    assert len(mlflow.get_metric_history(trial.mlflow_run_id, "val_loss")) == 4


def test_each_trial_gets_a_folder_of_its_own_kept_across_attempts(compute_client, tracking):
    data = byo_config(tracking, "bracket", budget={"max_trials": 3, "max_parallel": 3}, compute={"max_retries": 1},
                      metrics={"patterns": [r"^\[(?P<step>\d+)/\d+\] val loss (?P<val_loss>[-+.\deE]+)"]})  # fmt: skip
    data["command"].append("--fail-first-attempt")
    outcome = run_campaign(campaign_of(data), settings=FAST)

    folders = []
    for t in outcome.status.trials:
        assert t.state is TrialState.complete
        job = compute_client.get(t.job_id)
        folder = Path(job.spec.env["AR_TRIAL_DIR"])
        assert job.spec.argv[job.spec.argv.index("--out-dir") + 1] == f"{folder}/out"  # {trial_dir}
        assert (folder / "out" / "owner.txt").read_text() == str(t.number)
        assert folder.name == f"trial-{t.number}" and folder.is_dir()
        assert len(job.attempts) == 2 and (folder / "attempt-1.txt").read_text() == str(t.number)
        folders.append(folder)
    assert len(set(folders)) == 3
