"""The status computed once, as plain data (`status_core`): what `autoresearch status` prints from plain
views of the ledger is, byte for byte, the `CampaignStatus` the records give, for a ledger with
confirmations, a holdout, suspect results, failures, a cancelled trial and a running trial whose job
still waits in the compute queue; and `autoresearch status [NAME] --json` imports no pydantic."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from autoresearch.campaign import CampaignState, Ledger, Proposal, TrialFailure, read_overviews, read_status
from autoresearch.campaign.holdout import HoldoutResult
from autoresearch.campaign.status_core import read_overviews_data, read_status_data
from autoresearch.campaign.validity import AttemptProvenance, Provenance
from compute import JobSpec
from compute.paths import ComputePaths
from compute.store import Store
from tests.autoresearch.campaign.conftest import make_campaign
from tests.autoresearch.cli.climodules import READ_FORBIDDEN, run_cli


def _ledger(tmp_path: Path, home: Path) -> Ledger:
    """A campaign (maximize, confirm the top 2 with 2 seeds, a holdout) whose ledger holds every kind of trial."""
    campaign = make_campaign(tmp_path, name="mixed", objective={
        "metric": "acc", "mode": "max", "holdout": {"command": ["true"], "metric": "test_acc", "top_k": 2}},
        confirm={"top_k": 2, "seeds": 2}, validity={"min_speed_ratio": 0.5})  # fmt: skip
    ledger = Ledger.open(campaign, home)
    ledger.update_facts(active_s=120.0, run_started_at=datetime.now(UTC) - timedelta(minutes=5))  # a run, killed
    proposals = [Proposal(params={"x": 0.5, "y": 1, "kind": "a"}), Proposal(params={"x": 1.5, "y": 2, "kind": "b"}),
                 Proposal(params={"x": 0.5, "y": 1, "kind": "a"}, confirms=0),
                 Proposal(params={"x": 0.5, "y": 1, "kind": "a"}, confirms=0),
                 Proposal(params={"x": -1.0, "y": 0, "kind": "c"}), Proposal(params={"x": 2.0, "y": 5, "kind": "c"}),
                 Proposal(params={"x": 1.5, "y": 2, "kind": "b"}, suspect_rerun_of=1),
                 Proposal(params={"x": 0.0, "y": 3, "kind": "a"}), Proposal(params={"x": 0.1, "y": 3, "kind": "b"})]
    for p in proposals:
        number = ledger.admit(p).trial_number
        if number < 8:
            ledger.mark_launched(number, f"job-{number:010d}")
    degraded = Provenance(attempts=[AttemptProvenance(attempt=1, node="n2", gpus=[0], gpu_model="H100", started_at=0.0,
                                                      degraded=["thermal: throttled"])], speed=2.5)  # fmt: skip
    healthy = Provenance(attempts=[AttemptProvenance(attempt=1, node="n1", gpus=[1], gpu_model="H100", started_at=0.0,
                                                     ended_at=60.0)], speed=10.0)  # fmt: skip
    ledger.record_provenance(1, degraded)
    ledger.record_provenance(0, healthy)
    ledger.set_mlflow_run(0, "run-0")
    for number, value in [(0, 9.0), (1, 9.5), (2, 8.0), (3, 8.5), (6, 7.0)]:
        ledger.complete(number, value, gpu_seconds=900.0, real_gpus=True)
    ledger.fail(4, TrialFailure.user, log_excerpt="ValueError: bad lr\nTraceback ...", gpu_seconds=30.0)
    ledger.cancel(5, "stopped by a person")
    ledger.update_facts(holdouts=(HoldoutResult(trial=0, job_id="job-h0", value=8.25),
                                  HoldoutResult(trial=6, job_id="job-h6", error="oom")))  # fmt: skip
    ledger.add_llm_cost(0.25)
    return ledger


def test_the_plain_status_is_the_full_status_byte_for_byte(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ledger = _ledger(tmp_path, home)
    store = Store(ComputePaths.of(home))  # trial 7's job waits in the queue (no daemon placed it yet)
    try:
        job = store.submit(JobSpec(argv=["true"]))
    finally:
        store.close()
    ledger.mark_launched(7, job.id)
    now = datetime.now(UTC)

    views, plain = read_status_data("mixed", home, now)
    full = read_status("mixed", home, now)[1]

    assert json.dumps(plain, indent=2) == json.dumps(full.model_dump(mode="json"), indent=2)
    assert full.best_trial is not None and full.best_trial.number == 0 and full.best_trial.n == 3  # confirmed: 9, 8, 8.5
    assert [t.number for t in full.trials if t.suspect] == [1] and full.trials[6].suspect_rerun_of == 1
    assert full.holdout is not None and [r.trial for r in full.holdout.rows] == [0, 6]
    assert full.trials[7].waiting_reason is not None and full.trials[8].state.value == "proposed"
    assert full.state is CampaignState.interrupted  # running, and no runner holds it
    assert full.budget_used.elapsed > 120.0 and full.budget_used.llm_usd == 0.25
    assert not full.budget_used.real_gpus  # trial 4 held slots that were no physical GPUs
    assert [t.number for t in views.trials] == list(range(9))

    overviews = read_overviews_data(home)
    assert json.dumps(overviews) == json.dumps([o.model_dump(mode="json") for o in read_overviews(home)])


def test_status_json_imports_no_pydantic(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _ledger(tmp_path, home)
    dump = tmp_path / "modules.json"

    one, heavy = run_cli(home, "status", "mixed", "--json", dump=dump, forbidden=READ_FORBIDDEN)
    assert one.returncode == 0 and heavy == [], (one.stderr, heavy)
    assert json.loads(one.stdout)["best_trial"]["number"] == 0

    every, heavy = run_cli(home, "status", "--json", dump=dump, forbidden=READ_FORBIDDEN)
    assert every.returncode == 0 and heavy == [], (every.stderr, heavy)
    assert [c["name"] for c in json.loads(every.stdout)] == ["mixed"]

    table, heavy = run_cli(home, "status", "mixed", dump=dump, forbidden=(*READ_FORBIDDEN[:-1],))  # rich draws it
    assert table.returncode == 0 and heavy == [], (table.stderr, heavy)
    assert "mixed interrupted | trials 8/30" in table.stdout
