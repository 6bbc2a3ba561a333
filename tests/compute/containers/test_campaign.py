"""A campaign whose trials run in a container (local/python: busybox plus Python 3.11), on docker
and on podman: the tinygpt-style flow (config -> trials -> jobs -> metrics -> report) with a
dataset mounted read-only and recorded as an MLflow input of every trial's run.

The job is examples/synthetic/job.py (stdlib only, the contract every autoresearch job keeps:
`key: value` lines, SIGTERM checkpoints). tinygpt itself needs torch, which the test image
does not hold."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from autoresearch.campaign import CampaignState, ConfigError, TrialState, load_campaign
from autoresearch.cli import _register, app
from autoresearch.runner import run_campaign
from compute import dataset_digest
from tracking import MlflowTracker
from tests.compute.containers.conftest import PYTHON, our_containers
from tests.compute.containers.test_jobs import SLOW
from tests.compute.helpers import log_text, wait_until
from tests.autoresearch.runner.conftest import (
    FAST,
    campaign_jobs,
    campaign_of,
    synthetic_config,
    write_config,
)

_register()
cli = CliRunner()

JOB = ("echo python=$(python -c 'import sys; print(sys.executable, sys.version.split()[0])'); "
       "echo data=$(cat $AR_DATA_TRAIN); "
       "exec python job.py --function branin --x1 {x1} --x2 {x2} --steps 3 --step-seconds 0.02 --no-mlflow")


def test_a_campaign_runs_its_trials_in_containers_with_a_recorded_dataset(compute_client, tracking, runtime, tmp_path):
    train = tmp_path / "train.txt"
    train.write_text("shakespeare\n")
    data = synthetic_config(tracking, budget={"max_trials": 3, "max_parallel": 2},
                            compute={"image": PYTHON, "container_runtime": runtime},
                            data={"train": {"path": str(train)}})
    data["command"] = ["sh", "-c", JOB]
    outcome = run_campaign(campaign_of(data), settings=FAST)

    assert outcome.state is CampaignState.completed, outcome.reason
    trials = outcome.status.trials
    assert [t.state for t in trials] == [TrialState.complete] * 3 and all(t.value is not None for t in trials)
    for job in campaign_jobs(compute_client, data["name"]):
        assert job.spec.image == PYTHON and job.spec.container_runtime == runtime
        lines = log_text(compute_client, job.id).splitlines()
        assert any(line.startswith("python=/usr/bin/python 3.11") for line in lines), lines  # the image's
        assert "data=shakespeare" in lines
    for t in trials:
        (recorded,) = MlflowTracker(tracking).datasets(t.mlflow_run_id)
        assert (recorded.name, recorded.source, recorded.digest) == ("train", str(train), dataset_digest(str(train)))
    report = cli.invoke(app, ["report", data["name"], "--out", str(tmp_path / "rep")])
    assert report.exit_code == 0, report.output
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "## Datasets" in text and f"| train | `{train}` | `{dataset_digest(str(train))}` |" in text
    wait_until(lambda: not our_containers(runtime), SLOW, "no container left")


def test_a_missing_dataset_is_a_config_error_naming_file_line_and_field(tracking, tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "val.bin").write_bytes(b"v")
    data = synthetic_config(tracking, data={"val": {"path": "./data/val.bin"}, "train": {"path": "./data/nope.bin"}})
    config = write_config(tmp_path, data)
    with pytest.raises(ConfigError) as err:
        load_campaign(config)
    message = str(err.value)
    assert f"{config}:" in message and "data.train.path" in message and "does not exist" in message
    assert "data.val" not in message
    data["data"] = {"val": {"path": "./data/val.bin"}}
    assert load_campaign(write_config(tmp_path, data)).data["val"].path == tmp_path / "data" / "val.bin"


def test_compute_image_is_validated_in_campaign_configs(tracking, tmp_path):
    data = synthetic_config(tracking, compute={"image": "--privileged", "container_runtime": "lxc"})
    with pytest.raises(ConfigError) as err:
        load_campaign(write_config(tmp_path, data))
    assert "compute.image" in str(err.value) and "compute.container_runtime" in str(err.value)
