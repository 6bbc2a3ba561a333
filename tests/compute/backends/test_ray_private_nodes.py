"""Ray nodes that share no filesystem with the daemon (tests/compute/backends/netns_cluster.py): a
head (2 GPUs) and `w1` (1 GPU) each in its own network namespace, and `priv` (2 GPUs) also in a
mount namespace that hides the daemon's home and the job folders. The daemon runs in the head's
namespace, started by `compute up` as a user would."""

from __future__ import annotations

import json
import shutil
import sys
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from compute import AttemptOutcome, Client, FailureClass, JobSpec, JobState, NodeState, stop_daemon
from tests.compute.backends.netns_cluster import NetnsCluster, compute_up
from tracking import MlflowTracker, create_job_run, resolve_tracking, stop_tracking_server
from tests.compute.helpers import log_so_far, wait_state, wait_until

pytestmark = pytest.mark.ray


@pytest.fixture
def up(netns_cluster: NetnsCluster, request: pytest.FixtureRequest) -> Iterator[Callable[..., Client]]:
    """Factory: `compute up --backend ray FLAGS` on a fresh home under the hidden folder -> Client."""
    homes: list[Path] = []

    def start(*flags: str) -> Client:
        home = netns_cluster.hidden / f"{request.node.name}-{len(homes)}"
        homes.append(home)
        compute_up(netns_cluster, home, *flags)
        client = Client(home, autostart=False)
        assert sorted(n.name.split("-")[0] for n in client.nodes()) == ["head", "priv", "w1"]
        return client

    yield start
    for home in homes:
        stop_daemon(home, stop_jobs=True, wait_s=60)
        stop_tracking_server(home)


def node_named(client: Client, host: str) -> str:
    return next(n.name for n in client.nodes() if n.name.startswith(f"{host}-"))


def only_on(client: Client, host: str) -> None:
    """Cordon every node but `host`'s, once it has passed its first probe."""
    wait_until(lambda: all(s.last_probe_at for s in client.node_status()), what="every node's first probe")
    for node in client.nodes():
        if not node.name.startswith(f"{host}-"):
            client.cordon(node.name, "test: keep the job on one node")


def test_a_node_without_the_shared_path_is_quarantined(up, netns_cluster):
    client = up()  # no --storage: the daemon's home is the shared path, which priv does not see

    def quarantined() -> Any:
        status = {s.name.split("-")[0]: s for s in client.node_status()}
        return status if status["priv"].state is NodeState.quarantined else None

    status = wait_until(quarantined, what="priv quarantined")
    assert "sentinel is not visible" in status["priv"].reason and str(client.home) in status["priv"].reason
    wait_until(lambda: all(s.last_probe_at for s in client.node_status()), what="every node's first probe")
    status = {s.name.split("-")[0]: s for s in client.node_status()}
    assert status["head"].state is NodeState.active and status["w1"].state is NodeState.active


def test_a_working_directory_or_program_missing_on_a_node_is_infra_with_its_message(up, netns_cluster):
    client = up("--storage", str(netns_cluster.store))  # a shared path priv sees; the job folders it does not
    only_on(client, "priv")
    work = netns_cluster.hidden / "missing-cwd"
    work.mkdir()
    tool = work / "tool.sh"
    tool.write_text("#!/bin/sh\necho tool ran on $(hostname)\n")
    tool.chmod(0o755)
    no_cwd = client.submit(JobSpec(argv=["sh", "-c", "echo ran on $(hostname)"], cwd=str(work), max_retries=0))
    no_program = client.submit(JobSpec(argv=[str(tool)], cwd=str(netns_cluster.open), max_retries=0))

    def first_ended(job_id: str) -> Any:
        attempts = client.get(job_id).attempts
        return attempts[0] if attempts and attempts[0].outcome is not None else None

    for job_id, message in [(no_cwd.id, f"working directory {work} does not exist on Ray node"),
                            (no_program.id, f"{tool} is not found on Ray node")]:
        first = wait_until(lambda j=job_id: first_ended(j), what=f"{job_id} attempt 1 ended")
        assert first.node.startswith("priv-")
        assert first.failure_class is FailureClass.infra and first.outcome is AttemptOutcome.infra_failed
        assert first.failure_rule == "node_unfit" and f"{message} {first.node}" in (first.log_excerpt or "")
    client.uncordon(node_named(client, "head"))
    for job_id, line in [(no_cwd.id, "ran on head"), (no_program.id, "tool ran on head")]:
        done = wait_state(client, job_id, JobState.succeeded)
        assert done.attempts[-1].node.startswith("head-") and line in log_so_far(client, job_id)
        assert done.retries_used == 0


TRAIN = """step=$(cat "$AR_CHECKPOINT_DIR/step" 2>/dev/null || echo 0)
echo "attempt $AR_ATTEMPT on $(hostname) resumes at step $step"
trap 'echo saved at step $step; exit 0' TERM
while [ ! -e "$1" ]; do step=$((step+1)); echo "$step" > "$AR_CHECKPOINT_DIR/step"; echo "step $step"; sleep 0.2; done
echo "done at step $step"
"""


def test_logs_come_back_while_the_job_runs_on_a_private_node(up, netns_cluster):
    client = up("--storage", f"file://{netns_cluster.store}")
    only_on(client, "priv")
    work = netns_cluster.hidden / "logs-job"
    work.mkdir()
    (work / "train.sh").write_text(TRAIN)  # only the daemon's host has it: it travels in the storage
    gate = netns_cluster.open / "logs-gate"
    job = client.submit(JobSpec(argv=["sh", "train.sh", str(gate)], cwd=str(work), max_retries=0))
    wait_until(lambda: "step 3" in log_so_far(client, job.id), what="step 3 in the log on the daemon's host")
    assert client.get(job.id).state is JobState.running
    assert "attempt 1 on priv resumes at step 0" in log_so_far(client, job.id)
    gate.touch()
    done = wait_state(client, job.id, JobState.succeeded)
    assert done.attempts[0].node.startswith("priv-") and "done at step" in log_so_far(client, job.id)


def test_a_checkpoint_resumes_on_another_node_after_preemption(up, netns_cluster):
    client = up("--storage", f"file://{netns_cluster.store}")
    only_on(client, "priv")  # the 2-GPU jobs fit on priv alone (w1 has 1 GPU)
    work = netns_cluster.hidden / "ckpt-job"
    work.mkdir()
    (work / "train.sh").write_text(TRAIN)
    gate, high_gate = netns_cluster.open / "ckpt-gate", netns_cluster.open / "ckpt-high-gate"
    low = client.submit(JobSpec(argv=["sh", "train.sh", str(gate)], cwd=str(work), priority="low",
                                resources={"gpus": 2}))
    wait_until(lambda: "step 3" in log_so_far(client, low.id, 1), what="low at step 3 on priv")
    high = client.submit(JobSpec(argv=["sh", "-c", f'while [ ! -e "{high_gate}" ]; do sleep 0.1; done'],
                                 cwd=str(work), priority="high", resources={"gpus": 2}))
    wait_until(lambda: (a := client.get(low.id).attempts) and a[0].outcome is AttemptOutcome.preempted,
               what="low preempted on priv")
    saved = int(log_so_far(client, low.id, 1).split("saved at step ")[1].split()[0])
    assert saved >= 3
    client.uncordon(node_named(client, "head"))  # priv is busy with `high`: low resumes on the head
    text = wait_until(lambda: "resumes at step" in (t := log_so_far(client, low.id, 2)) and t, what="low attempt 2")
    assert f"attempt 2 on head resumes at step {saved}" in text
    gate.touch()
    high_gate.touch()
    assert wait_state(client, low.id, JobState.succeeded).attempts[0].node.startswith("priv-")
    wait_state(client, high.id, JobState.succeeded)


def test_a_campaign_reading_log_metrics_completes_on_a_private_node(up, netns_cluster, tracking, monkeypatch):
    from autoresearch.campaign import Campaign, CampaignState, TrialState
    from autoresearch.runner import run_campaign
    from tests.autoresearch.runner._byo import JOBS, NANOGPT_PATTERNS, byo_config, last_val_loss
    from tests.autoresearch.runner.conftest import FAST

    client = up("--storage", f"file://{netns_cluster.store}")
    only_on(client, "priv")
    monkeypatch.setenv("AUTORESEARCH_HOME", str(client.home))
    work = netns_cluster.hidden / "campaign"
    work.mkdir()
    shutil.copy(JOBS / "byo_job.py", work)  # the trials' script exists on the daemon's host only
    command = [sys.executable, "byo_job.py", "--format", "nanogpt", "--x", "{x}", "--steps", "4",
               "--out-dir", "{trial_dir}/out"]
    data = {**byo_config(tracking, "nanogpt", command=command, metrics={"patterns": NANOGPT_PATTERNS}),
            "cwd": str(work)}
    outcome = run_campaign(Campaign.model_validate(data, context={"base_dir": work}), settings=FAST)

    assert outcome.state is CampaignState.completed
    for trial in outcome.status.trials:
        assert trial.state is TrialState.complete and trial.value == last_val_loss(trial.params["x"], 4)
        assert client.get(trial.job_id).attempts[-1].node.startswith("priv-")


LOG_TO_MLFLOW = """import os, mlflow
try:
    with mlflow.start_run():  # MLFLOW_RUN_ID: the run the submitter made
        mlflow.log_metric("loss", 0.25, step=1)
        with open("weights.txt", "w") as out:
            out.write("w = 0.5")
        mlflow.log_artifact("weights.txt", "model")
        mlflow.log_text("logged on " + os.uname().nodename, "notes/where.txt")
finally:
    print("stray store:", os.path.exists(os.path.join(os.environ["AR_HOME_SEEN"], "mlflow.db")))
"""


def _listed(server: str, run_id: str, path: str) -> list[str]:
    """What the MLflow UI's REST API of `server` lists of the run's artifacts under `path`."""
    query = urllib.parse.urlencode({"run_id": run_id, "path": path})
    with urllib.request.urlopen(f"{server}/api/2.0/mlflow/artifacts/list?{query}", timeout=30) as response:
        return sorted(f["path"] for f in json.load(response).get("files", []))


def test_a_job_on_a_private_node_logs_metrics_and_artifacts_to_the_daemon_hosts_mlflow_store(up, netns_cluster):
    client = up("--storage", f"file://{netns_cluster.store}")
    only_on(client, "priv")
    tracker = MlflowTracker(resolve_tracking(home=client.home))  # the home's default SQLite store
    binding = create_job_run(tracker, "remote-logging", "on-priv", home=client.home)
    assert binding.env["MLFLOW_TRACKING_URI"].startswith("http://")  # served to the nodes
    work = netns_cluster.hidden / "mlflow-job"
    work.mkdir()
    (work / "log.py").write_text(LOG_TO_MLFLOW)
    job = client.submit(JobSpec(argv=[sys.executable, "log.py"], cwd=str(work), max_retries=0,
                                env={**binding.env, "AR_HOME_SEEN": str(client.home)}))
    done = wait_state(client, job.id, JobState.succeeded)
    assert done.attempts[0].node.startswith("priv-")
    assert "stray store: False" in log_so_far(client, job.id)
    assert [(m.step, m.value) for m in tracker.metric_history(binding.run_id, "loss")] == [(1, 0.25)]
    server = binding.env["MLFLOW_TRACKING_URI"]  # its MLflow UI, on the daemon's host
    assert _listed(server, binding.run_id, "model") == ["model/weights.txt"]
    assert _listed(server, binding.run_id, "notes") == ["notes/where.txt"]
    folder = client.home / "mlartifacts" / binding.run_id / "artifacts"  # the store's artifact folder, here
    assert (folder / "model/weights.txt").read_text() == "w = 0.5"
    assert (folder / "notes/where.txt").read_text().startswith("logged on priv")
    tracker.log_text(binding.run_id, "written here", "trial/here.txt")  # the runner's own writes land there too
    assert _listed(server, binding.run_id, "trial") == ["trial/here.txt"]


def test_a_checkpoint_kept_while_running_resumes_after_its_node_dies(up, netns_cluster):
    """The checkpoint directory reaches the store while the attempt runs: a node that dies mid-attempt
    (every process of it SIGKILLed) does not take the job's progress along. Last in this file: it
    adds a node, `doomed`, that stays dead."""
    client = up("--storage", f"file://{netns_cluster.store}")
    doomed = netns_cluster.add_node("doomed", gpus=2, private=True)
    wait_until(lambda: any(n.name.startswith("doomed-") for n in client.nodes()), what="doomed in the node table")
    only_on(client, "doomed")
    work = netns_cluster.hidden / "lost-job"
    work.mkdir()
    (work / "train.sh").write_text(TRAIN)
    gate = netns_cluster.open / "lost-gate"
    job = client.submit(JobSpec(argv=["sh", "train.sh", str(gate)], cwd=str(work), resources={"gpus": 2}))
    wait_until(lambda: "step 3" in log_so_far(client, job.id, 1), what="step 3 on doomed")
    kept = netns_cluster.store / "checkpoints" / job.id
    version = wait_until(lambda: (kept / "LATEST").is_file() and (kept / "LATEST").read_text(),
                         what="a version of the checkpoint in the store while the job runs")
    saved = int((kept / version / "step").read_text())
    assert saved >= 1 and client.get(job.id).state is JobState.running
    netns_cluster.kill(doomed)
    first = wait_until(lambda: (a := client.get(job.id).attempts) and a[0].outcome is not None and a[0],
                       what="the attempt on the dead node settled")
    assert first.node.startswith("doomed-") and first.outcome is AttemptOutcome.lost
    client.uncordon(node_named(client, "head"))
    text = wait_until(lambda: "resumes at step" in (t := log_so_far(client, job.id, 2)) and t, what="attempt 2")
    resumed = int(text.split("resumes at step ")[1].split()[0])
    assert "attempt 2 on head" in text and resumed >= saved, text
    gate.touch()
    assert wait_state(client, job.id, JobState.succeeded).retries_used == 0
