"""What a trial's MLflow run holds after a real campaign (issue 30 items 4, 5): it starts and ends
with its job (first attempt's start, last attempt's end), not when the campaign made it ahead of
need; it carries every attempt's log, the resolved command and config, and for a code-edit trial
its patch and workspace diff."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml
from mlflow.tracking import MlflowClient

from autoresearch.campaign import CampaignState, Ledger, TrialState
from autoresearch.llm import FakeLLMServer
from autoresearch.runner import run_campaign
from compute import Client, Job
from tests.autoresearch.conftest import FAST_LLM, KEY, Researcher, llm_policy, rate_patch, toy_campaign
from tests.autoresearch.runner.conftest import FAST, campaign_of, synthetic_config
from tracking import TrackingConfig


def _text(client: MlflowClient, run_id: str, path: str, folder: Path) -> str:
    return Path(client.download_artifacts(run_id, path, str(folder))).read_text()


def _listed(client: MlflowClient, run_id: str, folder: str) -> list[str]:
    return sorted(a.path for a in client.list_artifacts(run_id, folder))


def _assert_dated_by(run_info, job: Job) -> None:
    first, last = job.attempts[0], job.attempts[-1]
    assert last.ended_at is not None
    assert (run_info.start_time, run_info.end_time) == (int(first.started_at * 1000), int(last.ended_at * 1000))


def test_each_run_starts_and_ends_with_its_job_and_holds_its_log_and_command(
    compute_home: Path, compute_client: Client, tracking: TrackingConfig, tmp_path: Path
) -> None:
    data = synthetic_config(tracking, steps=4, step_seconds=0.25, budget={"max_trials": 3, "max_parallel": 1})
    outcome = run_campaign(campaign_of(data), home=compute_home, settings=FAST)
    assert outcome.state is CampaignState.completed, outcome.reason

    ledger = Ledger.load(data["name"], compute_home)
    mlflow = MlflowClient(tracking.tracking_uri)
    campaign_start = int(ledger.started_at.timestamp() * 1000)
    for trial in ledger.trials():
        assert trial.mlflow_run_id and trial.job_id and trial.state is TrialState.complete
        job, run = compute_client.get(trial.job_id), mlflow.get_run(trial.mlflow_run_id)
        _assert_dated_by(run.info, job)  # a ~1 s trial lasts ~1 s in MLflow, not since the campaign began
        if trial.number == 2:  # its run was made ahead of need, with the campaign; its job ran seconds later
            assert run.info.start_time - campaign_start > 1000

        run_id = trial.mlflow_run_id
        assert [a.path for a in mlflow.list_artifacts(run_id)] == ["logs", "trial"]
        assert _listed(mlflow, run_id, "logs") == ["logs/attempt-1.log"]
        assert _listed(mlflow, run_id, "trial") == ["trial/campaign.yaml", "trial/command.json"]
        folder = tmp_path / run_id
        log = _text(mlflow, run_id, "logs/attempt-1.log", folder)
        assert log == Path(job.attempts[0].log_path).read_text() and "objective" in log
        command = json.loads(_text(mlflow, run_id, "trial/command.json", folder))
        assert command["argv"] == job.spec.argv and command["argv"][0] == sys.executable
        assert command["params"] == trial.params and command["cwd"] == data["cwd"]
        assert command["argv"][command["argv"].index("--x1") + 1] == str(trial.params["x1"])
        assert command["env"]["MLFLOW_RUN_ID"] == run_id and command["env"]["AR_TRIAL"] == str(trial.number)
        assert yaml.safe_load(_text(mlflow, run_id, "trial/campaign.yaml", folder))["name"] == data["name"]


FLAKY = """\
import os, pathlib, sys
mark = pathlib.Path(os.environ["AR_TRIAL_DIR"]) / "tried"
print("attempt starts", flush=True)
if not mark.exists():
    mark.write_text("1")
    print("first attempt: failing on purpose", flush=True)
    sys.exit(3)
print("objective: 1.5")
"""


def test_a_retried_job_leaves_every_attempt_log_and_its_run_spans_both(
    compute_home: Path, compute_client: Client, tracking: TrackingConfig, tmp_path: Path
) -> None:
    (tmp_path / "flaky.py").write_text(FLAKY)
    data = synthetic_config(tracking, budget={"max_trials": 1, "max_parallel": 1}, compute={"max_retries": 1},
                            command=["python", "flaky.py"], cwd=str(tmp_path))  # fmt: skip
    outcome = run_campaign(campaign_of(data), home=compute_home, settings=FAST)
    assert outcome.state is CampaignState.completed, outcome.reason

    [trial] = Ledger.load(data["name"], compute_home).trials()
    assert trial.mlflow_run_id and trial.job_id and trial.value == 1.5
    job, mlflow = compute_client.get(trial.job_id), MlflowClient(tracking.tracking_uri)
    assert len(job.attempts) == 2
    _assert_dated_by(mlflow.get_run(trial.mlflow_run_id).info, job)
    run_id = trial.mlflow_run_id
    assert _listed(mlflow, run_id, "logs") == ["logs/attempt-1.log", "logs/attempt-2.log"]
    first = _text(mlflow, run_id, "logs/attempt-1.log", tmp_path / "a1")
    second = _text(mlflow, run_id, "logs/attempt-2.log", tmp_path / "a2")
    assert "failing on purpose" in first and "objective: 1.5" not in first
    assert "objective: 1.5" in second and second == Path(job.attempts[1].log_path).read_text()


def test_a_code_edit_trial_carries_its_patch_and_workspace_diff(
    llm_env: Path, toy_project: Path, tracking: TrackingConfig, tmp_path: Path
) -> None:
    ideas = [{"hypothesis": "baseline", "expected_effect": "a reference"},
             {"patch": rate_patch("1.0", "3.0"), "hypothesis": "RATE 3", "expected_effect": "lower loss"}]  # fmt: skip
    with FakeLLMServer(Researcher(ideas, read_first=False), api_key=KEY) as server:
        campaign = toy_campaign(toy_project, name="toy-artifacts", policy={**llm_policy(server, "anthropic"), "kind": "llm"},
                                tracking={"uri": tracking.tracking_uri}, budget={"max_trials": 2, "max_parallel": 1})  # fmt: skip
        outcome = run_campaign(campaign, home=llm_env, settings=FAST, policy_factory=FAST_LLM)
    assert outcome.state is CampaignState.completed, outcome.reason

    ledger = Ledger.load(campaign.name, llm_env)
    baseline, patched = ledger.trial(0), ledger.trial(1)
    assert patched.patch and patched.mlflow_run_id and baseline.mlflow_run_id
    mlflow = MlflowClient(tracking.tracking_uri)
    run_id = patched.mlflow_run_id
    assert _listed(mlflow, run_id, "patch") == ["patch/trial-1.patch"]
    assert "trial/workspace.diff" in _listed(mlflow, run_id, "trial")
    diff = _text(mlflow, run_id, "trial/workspace.diff", tmp_path / "d1")
    assert diff.startswith("--- a/train.py\n+++ b/train.py\n") and "\n-RATE = 1.0\n+RATE = 3.0\n" in diff
    unchanged = _text(mlflow, baseline.mlflow_run_id, "trial/workspace.diff", tmp_path / "d0")
    assert unchanged.startswith("[autoresearch: no difference between")
