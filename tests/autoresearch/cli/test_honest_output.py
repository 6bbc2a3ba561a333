"""What `status` and `jobs list` print is true and readable: slot-hours on virtual slots and GPU-hours
only on physical GPUs, trials sorted by value with their MLflow run, a live view that shows launched
trials running, and tables that fold no word where output is not a terminal."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from autoresearch.campaign import CampaignStatus, TrialState
from autoresearch.runner import run_campaign
from compute import JobSpec
from tests.autoresearch.cli.climodules import FORBIDDEN, run_cli
from tests.autoresearch.runner.conftest import FAST, campaign_of, synthetic_config
from tests.compute.helpers import real_gpu_host, wait_started, wait_until

HEAVY = (*FORBIDDEN, "sqlalchemy", "numpy")


def _run(tracking, **overrides) -> str:  # type: ignore[no-untyped-def]
    data = synthetic_config(tracking, compute={"gpus": 1}, **overrides)
    assert run_campaign(campaign_of(data), settings=FAST).state.value == "completed"
    return str(data["name"])


def test_status_says_slot_hours_on_virtual_slots_and_gpu_hours_only_on_physical_gpus(
    start_compute, tracking, tmp_path, monkeypatch
):  # fmt: skip
    virtual = start_compute()
    assert [n.virtual for n in virtual.nodes()] == [True]  # no GPU behind the 4 slots here
    name = _run(tracking, budget={"max_trials": 2, "max_parallel": 2})
    shown, heavy = run_cli(virtual.home, "status", name, dump=tmp_path / "m.json", forbidden=HEAVY)
    assert shown.returncode == 0 and heavy == [], shown.stderr
    assert re.search(r"\d+\.\d\d slot-hours", shown.stdout) and "GPU" not in shown.stdout
    used = json.loads(run_cli(virtual.home, "status", name, "--json", dump=tmp_path / "m.json")[0].stdout)["budget_used"]
    assert used["gpu_hours"] > 0 and used["real_gpus"] is False

    real_gpu_host(tmp_path / "bin", monkeypatch)
    real = start_compute()  # a new home whose node `local` has (stand-in) physical GPUs
    assert [n.virtual for n in real.nodes()] == [False]
    name = _run(tracking, budget={"max_trials": 1, "max_parallel": 1})
    shown = run_cli(real.home, "status", name, dump=tmp_path / "m.json")[0]
    assert re.search(r"\d+\.\d\d GPU-hours", shown.stdout) and "slot-hours" not in shown.stdout
    assert json.loads(run_cli(real.home, "status", name, "--json", dump=tmp_path / "m.json")[0].stdout)[
        "budget_used"]["real_gpus"] is True


def test_status_of_a_done_campaign_shows_the_best_trials_first_with_their_mlflow_runs(compute_client, tracking, tmp_path):
    name = _run(tracking, budget={"max_trials": 14, "max_parallel": 4})
    dump = tmp_path / "m.json"
    status = CampaignStatus.model_validate_json(run_cli(compute_client.home, "status", name, "--json", dump=dump)[0].stdout)
    assert [t.number for t in status.trials] == list(range(14))  # --json: every trial, by number, as before
    assert all(t.mlflow_run_id for t in status.trials)
    best_first = sorted(status.trials, key=lambda t: (t.value, t.number))  # objective: min

    shown, heavy = run_cli(compute_client.home, "status", name, dump=dump, forbidden=HEAVY)
    assert shown.returncode == 0 and heavy == [], shown.stderr
    rows = [line for line in shown.stdout.splitlines() if re.match(r"\s*\d+( \*)? ", line)]
    assert [int(row.split()[0]) for row in rows] == [t.number for t in best_first[:12]]  # done: the top 12 by value
    assert all(t.mlflow_run_id in row for t, row in zip(best_first, rows, strict=False))
    assert "showing the best 12 of 14 trials by value" in shown.stdout

    latest = run_cli(compute_client.home, "status", name, "--sort", "number", dump=dump)[0].stdout
    assert [int(line.split()[0]) for line in latest.splitlines() if re.match(r"\s*\d+( \*)? ", line)] == list(range(2, 14))
    by_value = json.loads(run_cli(compute_client.home, "status", name, "--sort", "value", "--json", dump=dump)[0].stdout)
    assert [t["number"] for t in by_value["trials"]] == [t.number for t in best_first]
    bad = run_cli(compute_client.home, "status", name, "--sort", "loss", dump=dump)[0]
    assert bad.returncode == 2 and "'loss' is not one of" in bad.stderr
    nameless = run_cli(compute_client.home, "status", "--sort", "value", dump=dump)[0]
    assert nameless.returncode == 2 and "give its name (`autoresearch status NAME --sort value`)" in nameless.stderr


class _Recorder:
    """A display that keeps what the runner showed, in order."""

    def __init__(self) -> None:
        self.seen: list[str | CampaignStatus] = []

    def event(self, text: str) -> None:
        self.seen.append(text)

    def update(self, status: CampaignStatus, max_trials: int) -> None:
        self.seen.append(status)

    def close(self) -> None:
        pass


def test_the_live_view_shows_launched_trials_running_before_any_ends(compute_client, tracking):
    data = synthetic_config(tracking, steps=10, step_seconds=0.2, budget={"max_trials": 2, "max_parallel": 2})
    shown = _Recorder()
    settings = dataclasses.replace(FAST, heartbeat_s=60.0)  # no refresh from a heartbeat while the trials run
    run_campaign(campaign_of(data), settings=settings, display=shown)
    launched = max(i for i, s in enumerate(shown.seen) if isinstance(s, str) and " launched as " in s)
    first_end = min(i for i, s in enumerate(shown.seen) if isinstance(s, str) and re.match(r"trial \d+ complete", s))
    between = [s for s in shown.seen[launched:first_end] if isinstance(s, CampaignStatus)]
    assert between, shown.seen  # refreshed once the trials were launched, not only after one ended
    assert sum(t.state is TrialState.running for t in between[0].trials) == 2 and between[0].budget_used.trials == 2


def test_jobs_list_outside_a_terminal_folds_no_word(compute_client, tmp_path: Path) -> None:
    blocker = compute_client.submit(JobSpec(name="blocker", argv=["sh", "-c", "echo up; sleep 60"], resources={"gpus": 4}))
    wait_started(compute_client, blocker.id)
    waiting = [compute_client.submit(JobSpec(name=f"waiting-for-all-four-slots-{i}", argv=["true"],
                                             resources={"gpus": 4})) for i in range(2)]  # fmt: skip
    wait_until(lambda: all(compute_client.get(j.id).waiting_reason for j in waiting), what="waiting reasons")
    listed, heavy = run_cli(compute_client.home, "jobs", "list", dump=tmp_path / "m.json")
    assert listed.returncode == 0 and heavy == [], listed.stderr
    for job in waiting:
        row = next(line for line in listed.stdout.splitlines() if job.id in line)
        assert job.spec.name in row and " pending " in row and compute_client.get(job.id).waiting_reason[:40] in row
    compute_client.cancel(blocker.id)
