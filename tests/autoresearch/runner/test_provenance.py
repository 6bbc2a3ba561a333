"""Hardware provenance and suspect results (issue 29 item 3), through a real daemon with virtual
nodes, real jobs, the real ledger and the session's MLflow store: a throttle drill while a trial
runs makes it suspect (its attempt runs on) and its re-run happens on another node; a job slowed
on one node is flagged by its speed; a bad `validity.min_speed_ratio` is refused where it is."""

from __future__ import annotations

import io
import json
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from click.testing import CliRunner

import autoresearch.cli.skills_cmds  # noqa: F401 - registers `skills`
from starlette.testclient import TestClient

from autoresearch.campaign import ConfigError, Ledger, TrialState, campaign_status, load_campaign
from autoresearch.cli import app
from autoresearch.report import write_report
from autoresearch.runner import run_campaign
from autoresearch.runner.display import render_status
from autoresearch.ui import UiSettings, create_app
from compute import HealthStatus, JobState
from compute.health import HealthConfig
from tracking import SUSPECT_TAG, mlflow_client
from tests.compute.helpers import real_gpu_host
from tests.autoresearch.runner.conftest import FAST, Background, campaign_jobs, wait_until

JOB = '''\
"""Prints `step: N` / `loss: X` lines; sleeps longer per step on the node named in SLOW_NODE;
waits for the file GATE (when set) before its last line."""
import os, sys, time
from pathlib import Path

x = float(sys.argv[1])
steps, pause = 8, (1.0 if os.environ.get("AR_NODE") == os.environ.get("SLOW_NODE") else 0.25)
gate = os.environ.get("GATE")
for step in range(1, steps + 1):
    time.sleep(pause)
    print(f"step: {step}", flush=True)
    if step == steps and gate:
        while not Path(gate).exists():
            time.sleep(0.05)
    print(f"loss: {(x - 1.0) ** 2 + step * 0.0}", flush=True)
'''
HEALTH = dict(preflight_ttl_s=600, probe_interval_s=600, recheck_backoff_s=60, recheck_backoff_max_s=60)


def _config(folder: Path, tracking: Any, **overrides: Any) -> dict[str, Any]:
    (folder / "job.py").write_text(JOB)
    data: dict[str, Any] = {
        "name": f"prov-{uuid.uuid4().hex[:8]}",
        "command": [sys.executable, "job.py", "{x}"],
        "cwd": str(folder),
        "objective": {"metric": "loss", "mode": "min"},
        "search_space": {"x": {"type": "float", "low": -2.0, "high": 2.0}},
        "budget": {"max_trials": 1, "max_parallel": 1},
        "compute": {"gpus": 1},
        "policy": {"kind": "optuna", "seed": 4, "pruner": "none"},
        "tracking": {"uri": tracking.tracking_uri},
    }  # fmt: skip
    data.update(overrides)
    return data


def _campaign(data: dict[str, Any]):  # type: ignore[no-untyped-def]
    from autoresearch.campaign import Campaign

    return Campaign.model_validate(data, context={"base_dir": Path(data["cwd"])})


def test_a_throttle_drill_makes_a_running_trial_suspect_and_its_rerun_runs_on_another_node(
        start_compute, tracking, tmp_path, monkeypatch):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1, health=HealthConfig(**HEALTH))
    gate = tmp_path / "gate"
    data = _config(tmp_path, tracking, env={"GATE": str(gate)})
    runner = Background(lambda: run_campaign(_campaign(data), home=client.home, settings=FAST))

    job = wait_until(lambda: next((j for j in campaign_jobs(client, data["name"]) if j.state is JobState.running),
                                  None), what="trial 0 running")  # fmt: skip
    node = job.attempts[-1].node
    client.inject_fault(node, "throttle")
    probe = wait_until(lambda: next((e for e in client.events(node=node, kind="probe")
                                     if e.data["status"] == HealthStatus.degraded.value), None),
                       what="a degraded probe of the throttled node")  # fmt: skip
    assert "sw_thermal_slowdown" in str(probe.data["failing"])
    assert client.get(job.id).state is JobState.running  # a throttle does not kill: the attempt runs on
    gate.write_text("open")
    runner.join(timeout=180)

    ledger = Ledger.load(data["name"], client.home)
    first, rerun = ledger.trials()
    assert first.state is TrialState.complete and client.get(job.id).attempts[-1].outcome.value == "succeeded"
    assert first.provenance is not None and first.provenance.nodes == [node]
    assert first.provenance.attempts[0].gpu_model == "virtual"
    assert rerun.suspect_rerun_of == 0 and rerun.state is TrialState.complete
    assert rerun.provenance is not None and node not in rerun.provenance.nodes
    status = campaign_status(ledger)
    shown = status.model_dump(mode="json")["trials"]
    assert shown[0]["suspect"] is True and f"node {node} was degraded" in shown[0]["suspect_reason"]
    assert "sw_thermal_slowdown" in shown[0]["suspect_reason"]
    assert shown[1]["suspect"] is False and shown[1]["suspect_rerun_of"] == 0
    assert status.best_trial is not None and status.best_trial.number == 1  # the suspect result is not declared
    tags = mlflow_client(tracking).get_run(first.mlflow_run_id).data.tags
    assert f"node {node} was degraded" in tags[SUSPECT_TAG]
    assert SUSPECT_TAG not in mlflow_client(tracking).get_run(rerun.mlflow_run_id).data.tags
    console = Console(file=io.StringIO(), width=400)
    console.print(render_status(status, 1))
    shown = console.file.getvalue()
    assert "suspect: node" in shown and "re-run of suspect trial 0" in shown
    best = CliRunner().invoke(app, ["skills", "call", "best_trials", "--campaign", data["name"], "--json", '{"k": 2}'])
    assert best.exit_code == 0, best.stderr  # the skills MCP serves: suspect results carry their reason
    assert {r["number"]: r["suspect_reason"] is not None for r in json.loads(best.stdout)["trials"]} == {0: True, 1: False}
    report = write_report(ledger, tmp_path / "report").read_text()
    section = report.split("## Suspect results", 1)[1].split("\n## ", 1)[0]
    assert "| 0 |" in section and "| #1 = " in section and f"Nodes that produced suspect results: {node} (1 trial)" in section
    with TestClient(create_app(UiSettings(home=client.home), warm=False), base_url="http://localhost") as web:
        page = web.get(f"/campaigns/{data['name']}").text
    assert page.count('class="badge suspect"') == 1 and "re-run of #0" in page


def test_trials_run_slowly_on_one_node_are_flagged_by_their_speed(start_compute, tracking, tmp_path):
    client = start_compute(gpus=None, virtual_nodes=3, gpus_per_node=1, health=HealthConfig(**HEALTH))
    data = _config(tmp_path, tracking, env={"SLOW_NODE": "local-1"}, budget={"max_trials": 9, "max_parallel": 3},
                   validity={"rerun_suspect": False, "min_speed_ratio": 0.5})
    # 4x slower there; 0.5 leaves room for a loaded host's slow interpreter starts on the others
    run_campaign(_campaign(data), home=client.home, settings=FAST)

    status = campaign_status(Ledger.load(data["name"], client.home))
    slow = [t for t in status.trials if t.nodes == ["local-1"]]
    fast = [t for t in status.trials if t.nodes and t.nodes != ["local-1"]]
    assert slow and fast and all(t.state is TrialState.complete for t in status.trials)
    assert all(t.suspect for t in slow), [(t.number, t.suspect_reason) for t in slow]
    assert all("on node local-1" in (t.suspect_reason or "") and "of the median" in (t.suspect_reason or "")
               for t in slow)
    assert not any(t.suspect for t in fast), [(t.number, t.suspect_reason) for t in fast]


def test_a_trial_on_physical_gpus_records_the_model_and_driver_its_nodes_probe_saw(
        start_compute, tracking, tmp_path, monkeypatch):
    real_gpu_host(tmp_path / "bin", monkeypatch)  # an nvidia-smi stand-in answering with 4 healthy H100s
    client = start_compute()
    data = _config(tmp_path, tracking)
    run_campaign(_campaign(data), home=client.home, settings=FAST)

    [trial] = Ledger.load(data["name"], client.home).trials()
    [attempt] = trial.provenance.attempts
    assert (attempt.node, attempt.gpu_model, attempt.driver) == ("local", "NVIDIA H100 80GB HBM3", "550.54.15")
    assert len(attempt.gpus) == 1 and attempt.degraded == [] and trial.provenance.speed > 0


def test_a_min_speed_ratio_above_one_is_refused_with_its_file_line_and_field(tmp_path):
    config = tmp_path / "campaign.yaml"
    config.write_text("name: bad\ncommand: [python, train.py]\nobjective: {metric: loss, mode: min}\n"
                      "search_space:\n  lr: {type: float, low: 0.001, high: 0.1}\nbudget: {max_trials: 2}\n"
                      "validity:\n  min_speed_ratio: 2\n")
    (tmp_path / "train.py").write_text("print('loss: 1')\n")
    with pytest.raises(ConfigError) as err:
        load_campaign(config)
    text = str(err.value)
    assert f"{config}:8" in text and "validity.min_speed_ratio" in text and "1" in text
