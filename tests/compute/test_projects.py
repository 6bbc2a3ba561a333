"""Projects through the store, the CLI and a real daemon: set/rm/list with events, submit checks,
an older store gaining the projects table, and a borrowed attempt reclaimed for its lender."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest
from click.testing import CliRunner

from autoresearch.cli import _register, app
from compute import AttemptOutcome, Client, ComputeError, ComputePaths, JobSpec, JobState, Store
from tests.compute.helpers import gate_job, wait_started, wait_state, wait_until

_register()


@pytest.fixture
def cli(compute_home):
    runner = CliRunner()

    def run(*args: str):
        return runner.invoke(app, list(args), env={"AUTORESEARCH_HOME": str(compute_home)})

    return run


def test_project_set_rm_and_projects_json_with_events(cli, compute_client):
    made = cli(
        "compute",
        "project",
        "set",
        "vision",
        "--quota-gpus",
        "2",
        "--weight",
        "2",
        "--max-priority",
        "high",
        "--no-lend",
        "--json",
    )
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["max_priority"] == 75
    assert cli("compute", "project", "set", "vision", "--quota-gpus", "3").exit_code == 0  # keeps the rest
    rows = {p["name"]: p for p in json.loads(cli("compute", "projects", "--json").stdout)}
    assert {
        k: rows["vision"][k]
        for k in ("quota_gpus", "weight", "max_priority", "borrow", "lend", "in_use", "borrowed", "lent", "pending")
    } == {
        "quota_gpus": 3,
        "weight": 2.0,
        "max_priority": 75,
        "borrow": True,
        "lend": False,
        "in_use": 0,
        "borrowed": 0,
        "lent": 0,
        "pending": 0,
    }
    assert "fair_share_usage" in rows["vision"]
    assert cli("compute", "project", "rm", "vision").exit_code == 0
    assert json.loads(cli("compute", "projects", "--json").stdout) == []
    kinds = [e.kind for e in compute_client.events() if e.kind.startswith("project_")]
    assert kinds == ["project_set", "project_set", "project_removed"]
    gone = cli("compute", "project", "rm", "vision")
    assert gone.exit_code != 0 and "no project 'vision'" in gone.output


def test_a_job_above_its_projects_max_priority_or_of_an_unknown_project_is_refused(cli, compute_client):
    compute_client.set_project("nlp", 1, max_priority="normal")
    with pytest.raises(ComputeError, match="priority 90 is above project nlp's max_priority 50; ask for 50 or lower"):
        compute_client.submit(JobSpec(argv=["true"], project="nlp", priority="urgent"))
    refused = cli("jobs", "submit", "--project", "nope", "--", "true")
    assert refused.exit_code != 0
    assert (
        "project 'nope' does not exist" in refused.output
        and "compute project set nope --quota-gpus N" in refused.output
    )
    job = compute_client.submit(JobSpec(argv=["true"], project="nlp", priority="low"))
    with pytest.raises(ComputeError, match="above project nlp's max_priority"):
        compute_client.set_priority(job.id, "high")


def test_a_project_with_pending_or_running_jobs_cannot_be_removed(tmp_path):
    with Client(tmp_path / "home", autostart=False) as client:
        client.set_project("nlp", 1)
        client.submit(JobSpec(argv=["true"], project="nlp"))  # no daemon: it stays pending
        with pytest.raises(ComputeError, match="project 'nlp' has 1 pending or running job"):
            client.remove_project("nlp")


def test_a_store_made_before_projects_gains_the_table_and_keeps_its_jobs(tmp_path):
    paths = ComputePaths.of(tmp_path / "home")
    store = Store(paths)
    job_id = store.submit(JobSpec(argv=["true"])).id
    store.close()
    with sqlite3.connect(paths.db) as conn:  # the schema as it was before projects
        conn.execute("DROP TABLE projects")
    store = Store(paths)
    try:
        assert store.get_job(job_id).state is JobState.pending
        assert store.read("SELECT COUNT(*) FROM projects")[0][0] == 0
        assert [e.kind for e in store.events()][-1] == "schema_migrated"
    finally:
        store.close()


def test_a_borrowed_attempt_is_reclaimed_for_its_lender_requeued_not_failed(start_compute, tmp_path):
    client = start_compute(gpus=2)
    client.set_project("a", 1)
    client.set_project("b", 1)
    gate = tmp_path / "gate"
    b_jobs = [client.submit(gate_job(gate, project="b", resources={"gpus": 1})).id for _ in range(2)]
    for job_id in b_jobs:
        wait_started(client, job_id)
    status = {p.name: p for p in client.projects()}
    assert (status["b"].in_use, status["b"].borrowed, status["a"].lent) == (2, 1, 1)
    a_job = client.submit(gate_job(gate, project="a", resources={"gpus": 1})).id
    wait_started(client, a_job)
    requeued = wait_until(
        # the waiting reason is written by the scheduling pass after the requeue: wait for both
        lambda: next((j for j in map(client.get, b_jobs)
                      if j.state is JobState.pending and j.waiting_kind is not None), None),
        what="a borrowed attempt of b requeued, with its waiting reason",
    )
    assert requeued.attempts[0].outcome is AttemptOutcome.preempted
    assert requeued.retries_used == 0
    assert requeued.waiting_kind is not None and requeued.waiting_kind.value == "borrowing"
    stops = [e for e in client.events(job_id=requeued.id) if e.kind == "stop_requested"]
    assert "reclaimed for " + a_job in stops[0].reason and "project a needs its quota back" in stops[0].reason
    other = next(j for j in b_jobs if j != requeued.id)
    assert client.get(other).state is JobState.running  # b's guaranteed attempt keeps running
    gate.touch()
    for job_id in [a_job, *b_jobs]:
        wait_state(client, job_id, JobState.succeeded)


def test_checkpoint_time_is_the_newest_mtime_of_the_dir_and_its_entries(tmp_path):
    from compute.usage import checkpoint_time

    ckpt = tmp_path / "ckpt"
    assert checkpoint_time(str(ckpt)) is None  # none yet: reclaim falls back to the start time
    ckpt.mkdir()
    (ckpt / "model.pt").write_text("x")
    os.utime(ckpt, (1000.0, 1000.0))
    os.utime(ckpt / "model.pt", (2000.0, 2000.0))
    assert checkpoint_time(str(ckpt)) == 2000.0  # written into
    os.utime(ckpt, (3000.0, 3000.0))
    assert checkpoint_time(str(ckpt)) == 3000.0  # `touch $AR_CHECKPOINT_DIR`


def test_a_cpu_quota_holds_a_projects_jobs_beyond_it_and_compute_projects_shows_it(start_compute, tmp_path):
    client = start_compute(gpus=None, virtual_nodes=1, gpus_per_node=1, cpus_per_node=8)
    runner = CliRunner()

    def cli(*args: str):  # a wide terminal: the projects table keeps "2 / 2" on one line
        return runner.invoke(app, list(args), env={"AUTORESEARCH_HOME": str(client.home), "COLUMNS": "200"})

    made = cli("compute", "project", "set", "etl", "--quota-cpus", "2", "--json")
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout)["quota_gpus"] == 0 and json.loads(made.stdout)["quota_cpus"] == 2.0
    gate = tmp_path / "gate"
    jobs = [client.submit(gate_job(gate, project="etl", resources={"cpus": 1.0})).id for _ in range(3)]
    for job_id in jobs[:2]:
        wait_started(client, job_id)
    held = wait_until(lambda: (j := client.get(jobs[2])).waiting_kind is not None and j, what="a waiting reason")
    assert held.state is JobState.pending and held.waiting_kind.value == "cpu_quota"
    assert held.waiting_reason == (
        "project etl is at its CPU quota: its running attempts hold 2 of 2 CPU(s) and this job needs 1"
    )
    row = next(p for p in json.loads(cli("compute", "projects", "--json").stdout) if p["name"] == "etl")
    assert (row["quota_cpus"], row["cpus_in_use"], row["pending"]) == (2.0, 2.0, 1)
    assert "2 / 2" in cli("compute", "projects").stdout
    gate.touch()
    assert all(j.state is JobState.succeeded for j in client.wait(jobs, timeout=60))


def test_compute_projects_counts_a_gangs_gpus_and_cpus_on_every_member(start_compute, tmp_path):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1)
    client.set_project("dist", 2)
    gate = tmp_path / "gate"
    job = client.submit(gate_job(gate, project="dist", resources={"gpus": 1, "nodes": 2, "cpus": 1.5}))
    wait_started(client, job.id)
    row = next(p for p in client.projects() if p.name == "dist")
    assert (row.in_use, row.borrowed, row.cpus_in_use) == (2, 0, 3.0)
    gate.touch()
    wait_state(client, job.id, JobState.succeeded)


def test_compute_projects_prints_the_typed_report(start_compute, tmp_path):
    """`compute projects --json` reads the store itself (no pydantic) and prints the `ProjectStatus`es
    `Client.projects` gives: quotas, a borrowed GPU and the quota lent for it, an unset project's
    defaults and its pending job."""
    client = start_compute(gpus=2)
    client.set_project("a", 1)
    client.set_project("b", 1, weight=2.0, quota_cpus=4)
    gate = tmp_path / "gate"
    b_jobs = [client.submit(gate_job(gate, project="b", resources={"gpus": 1, "cpus": 0.5})).id for _ in range(2)]
    for job_id in b_jobs:
        wait_started(client, job_id)
    pending = client.submit(gate_job(gate, resources={"gpus": 1})).id  # project default: no GPU left
    runner = CliRunner()

    shown = json.loads(runner.invoke(app, ["compute", "projects", "--json"],
                                     env={"AUTORESEARCH_HOME": str(client.home)}).stdout)  # fmt: skip
    typed = [p.model_dump(mode="json") for p in client.projects()]

    usage = [(s.pop("fair_share_usage"), t.pop("fair_share_usage")) for s, t in zip(shown, typed, strict=True)]
    assert shown == typed and all(abs(s - t) <= 1e-4 for s, t in usage)  # usage decays between the two reads
    rows = {p["name"]: p for p in shown}
    assert (rows["b"]["in_use"], rows["b"]["borrowed"], rows["b"]["cpus_in_use"], rows["a"]["lent"]) == (2, 1, 1.0, 1)
    assert (rows["default"]["configured"], rows["default"]["pending"], rows["default"]["weight"]) == (False, 1, 1.0)
    table = runner.invoke(app, ["compute", "projects"], env={"AUTORESEARCH_HOME": str(client.home), "COLUMNS": "200"})
    assert "default (not set)" in table.stdout and "1 / 4" in table.stdout
    gate.touch()
    for job_id in [*b_jobs, pending]:
        wait_state(client, job_id, JobState.succeeded)
