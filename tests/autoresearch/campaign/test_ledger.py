"""The trial ledger: trials live in an Optuna RDB study, end once, and survive a crash."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import optuna
import pytest

from autoresearch.campaign import (
    CampaignPaths,
    CampaignState,
    Ledger,
    LedgerError,
    Proposal,
    TrialFailure,
    TrialState,
)
from tests.autoresearch.campaign.conftest import make_campaign

REPO = Path(__file__).resolve().parents[3]
PARAMS = {"x": 1.5, "y": 3, "kind": "b"}


def test_admit_numbers_proposals_and_keeps_their_story(home: Path, tmp_path: Path) -> None:
    ledger = Ledger.open(make_campaign(tmp_path))
    first = ledger.admit(Proposal(params=PARAMS, rationale="center", hypothesis="x near 1 is best",
                                  expected_effect="score > 9", patch="--- a\n+++ b\n"))
    second = ledger.admit(Proposal(params={"x": -2, "y": 0, "kind": "a"}))

    assert (first.trial_number, second.trial_number) == (0, 1)
    assert second.params == {"x": -2.0, "y": 0, "kind": "a"}
    record = ledger.trial(0)
    assert record.state is TrialState.proposed and record.params == PARAMS
    assert (record.rationale, record.hypothesis, record.expected_effect) == ("center", "x near 1 is best", "score > 9")
    assert record.patch == "--- a\n+++ b\n"
    assert ledger.path == home / "campaigns" / "toy" / "optuna.db"
    assert ledger.idempotency_key(1) == f"toy/1@{ledger.started_at:%Y%m%dT%H%M%S%f}"


def test_admit_rejects_params_outside_the_space(home: Path, tmp_path: Path) -> None:
    ledger = Ledger.open(make_campaign(tmp_path))
    with pytest.raises(ValueError) as info:
        ledger.admit(Proposal(params={"x": 9.0, "y": 2.5, "knd": "a"}))
    message = str(info.value)
    assert "x=9.0 is outside [-5.0, 5.0]" in message
    assert "y=2.5 is not an integer" in message
    assert "kind is missing" in message and "knd is not in the search space (did you mean 'kind'?)" in message
    assert ledger.trials() == []


def test_a_reader_does_not_see_a_trial_whose_parameters_are_not_drawn_yet(home: Path, tmp_path: Path) -> None:
    writer = Ledger.open(make_campaign(tmp_path))
    writer.admit(Proposal(params=PARAMS))
    study = optuna.load_study(study_name="toy", storage=writer.storage_url)
    half = study.ask()  # another writer's ask, committed before its parameters are
    reader = Ledger.load("toy")
    assert [t.number for t in reader.trials()] == [0]  # not a proposed trial with params {}
    for name, spec in writer.campaign.search_space.items():
        spec.suggest(half, name)
    assert [t.number for t in Ledger.load("toy").trials()] == [0, 1]


def test_trial_life_and_first_verdict_wins(home: Path, tmp_path: Path) -> None:
    ledger = Ledger.open(make_campaign(tmp_path))
    numbers = [ledger.admit(Proposal(params=PARAMS)).trial_number for _ in range(5)]
    for n in numbers:
        ledger.mark_launched(n, f"job-{n:010d}")
    assert [t.number for t in ledger.running()] == numbers

    ledger.report(0, 1, 4.0)
    ledger.report(0, 1, 99.0)  # a repeated step is ignored (evaluate may run again after a resume)
    done = ledger.complete(0, 8.5, gpu_seconds=120.0)
    assert (done.state, done.value, done.intermediate_values, done.gpu_seconds) == (TrialState.complete, 8.5, {1: 4.0}, 120.0)
    assert ledger.complete(0, 1.0).value == 8.5
    assert ledger.fail(0, TrialFailure.user).state is TrialState.complete

    ledger.report(1, 3, 2.5)
    pruned = ledger.prune(1)
    assert (pruned.state, pruned.value) == (TrialState.pruned, 2.5)

    failed = ledger.fail(2, TrialFailure.resource, log_excerpt="CUDA out of memory", gpu_seconds=30)
    assert (failed.state, failed.failure_class, failed.log_excerpt) == (TrialState.failed, TrialFailure.resource, "CUDA out of memory")
    nan = ledger.complete(3, float("nan"))
    assert (nan.state, nan.failure_class) == (TrialState.failed, TrialFailure.non_finite)
    cancelled = ledger.cancel(4, "campaign stopped")
    assert (cancelled.state, cancelled.value) == (TrialState.cancelled, None)
    assert all(t.ended_at is not None and t.started_at is not None for t in ledger.trials())
    assert ledger.best().number == 0
    with pytest.raises(LedgerError, match="has no trial 9"):
        ledger.trial(9)


def test_every_trial_is_in_the_optuna_study(home: Path, tmp_path: Path) -> None:
    ledger = Ledger.open(make_campaign(tmp_path))
    n = ledger.admit(Proposal(params=PARAMS)).trial_number
    ledger.mark_launched(n, "job-00000000aa")
    ledger.set_mlflow_run(n, "run123")
    ledger.complete(n, 7.0)

    study = optuna.load_study(study_name="toy", storage=ledger.storage_url)  # what optuna-dashboard opens
    (trial,) = study.trials
    assert trial.params == PARAMS and trial.value == 7.0
    assert trial.user_attrs["job_id"] == "job-00000000aa" and trial.user_attrs["mlflow_run_id"] == "run123"
    assert study.direction == optuna.study.StudyDirection.MAXIMIZE


def test_the_study_names_its_metric_also_one_made_before(home: Path, tmp_path: Path) -> None:
    """optuna-dashboard shows the objective's name, not "Objective 0", on new and older studies."""
    campaign = make_campaign(tmp_path)
    ledger = Ledger.open(campaign)
    study = optuna.load_study(study_name="toy", storage=ledger.storage_url)
    assert study.metric_names == [campaign.objective.metric]
    older = campaign.model_copy(update={"name": "older"})
    path = CampaignPaths.of("older", home).ledger_db
    path.parent.mkdir(parents=True)
    optuna.create_study(study_name="older", storage=f"sqlite:///{path}", direction="maximize")  # unnamed, as before
    assert optuna.load_study(study_name="older", storage=f"sqlite:///{path}").metric_names is None
    assert Ledger.open(older).study_view().metric_names == [campaign.objective.metric]


def test_reopen_finds_unlaunched_and_unfinished_trials(home: Path, tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path)
    ledger = Ledger.open(campaign)
    asked = ledger.admit(Proposal(params=PARAMS)).trial_number
    launched = ledger.admit(Proposal(params={"x": 0.0, "y": 1, "kind": "c"})).trial_number
    ledger.mark_launched(launched, "job-0000000001")
    outside = optuna.load_study(study_name="toy", storage=ledger.storage_url)
    outside.enqueue_trial({"x": -1.0, "y": 2, "kind": "a"})  # a crash between enqueue and ask
    ledger_key = ledger.idempotency_key(asked)
    del ledger

    again = Ledger.open(campaign)
    unlaunched = again.unlaunched()
    assert [t.number for t in unlaunched] == [asked, 2]
    assert unlaunched[0].params == PARAMS and unlaunched[1].params == {"x": -1.0, "y": 2, "kind": "a"}
    (running,) = again.running()
    assert (running.number, running.job_id) == (launched, "job-0000000001")
    assert again.idempotency_key(asked) == ledger_key  # a restart relaunches with the same key


CRASHING_RUNNER = """
import os, signal, sys
sys.path.insert(0, {repo!r})
from autoresearch.campaign import Ledger
from autoresearch.policy import OptunaPolicy, PolicyContext
from tests.autoresearch.campaign.conftest import make_campaign
from pathlib import Path

ledger = Ledger.open(make_campaign(Path({base!r})))
policy = OptunaPolicy(ledger)
proposals = [ledger.admit(p) for p in policy.propose(PolicyContext.from_ledger(ledger), 3)]
ledger.mark_launched(proposals[0].trial_number, "job-00000000a0")
print(proposals[1].params, flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # the runner dies before launching trials 1 and 2
"""


def test_runner_killed_after_asking_leaves_trials_to_relaunch(home: Path, tmp_path: Path) -> None:
    script = CRASHING_RUNNER.format(repo=str(REPO), base=str(tmp_path))
    env = {**os.environ, "AUTORESEARCH_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == -signal.SIGKILL, proc.stderr

    ledger = Ledger.open(make_campaign(tmp_path))
    assert [t.number for t in ledger.running()] == [0]
    unlaunched = ledger.unlaunched()
    assert [t.number for t in unlaunched] == [1, 2]
    assert str(unlaunched[0].params) == proc.stdout.strip()  # relaunched with the same params
    assert all(set(t.params) == {"x", "y", "kind"} for t in unlaunched)


def test_campaign_level_facts(home: Path, tmp_path: Path) -> None:
    ledger = Ledger.open(make_campaign(tmp_path))
    assert ledger.state is CampaignState.running and ledger.ended_at is None
    ledger.add_llm_cost(0.25)
    ledger.add_llm_cost(0.5)
    ledger.append_note("lr above 0.05 diverges", author="policy")
    ledger.set_mlflow_experiment("12")
    ledger.set_state(CampaignState.completed, "max_trials reached")

    loaded = Ledger.load("toy")
    assert loaded.campaign == ledger.campaign
    assert loaded.llm_usd == 0.75 and loaded.mlflow_experiment_id == "12"
    assert [n.text for n in loaded.notes()] == ["lr above 0.05 diverges"]
    assert (loaded.state, loaded.state_reason) == (CampaignState.completed, "max_trials reached")
    assert loaded.ended_at is not None and loaded.ended_at >= loaded.started_at


def test_load_unknown_and_mode_change(home: Path, tmp_path: Path) -> None:
    Ledger.open(make_campaign(tmp_path))
    with pytest.raises(LedgerError, match=r"no campaign named 'nope'.*known campaigns: toy"):
        Ledger.load("nope")
    with pytest.raises(LedgerError, match="opposite objective mode"):
        Ledger.open(make_campaign(tmp_path, objective={"metric": "score", "mode": "min"}))


def test_proposal_cut_off_while_drawing_is_cancelled_on_reopen(home: Path, tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path)
    ledger = Ledger.open(campaign)
    trial = optuna.load_study(study_name="toy", storage=ledger.storage_url).ask()
    trial.suggest_float("x", -5.0, 5.0)  # the runner died before drawing y and kind
    ledger.admit(Proposal(params=PARAMS))

    again = Ledger.open(campaign)

    cut = again.trial(0)
    assert cut.state is TrialState.cancelled and "without y, kind" in cut.log_excerpt
    assert [t.number for t in again.unlaunched()] == [1]


def test_a_campaign_started_over_under_the_same_name_gets_new_idempotency_keys(home: Path, tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path)
    first = Ledger.open(campaign)
    old_key = first.idempotency_key(0)
    assert Ledger.open(campaign).idempotency_key(0) == old_key
    shutil.rmtree(first.path.parent)  # the campaign's folder deleted; its jobs live on in compute
    del first

    again = Ledger.open(campaign)
    assert again.idempotency_key(0) != old_key and again.idempotency_key(0).startswith("toy/0@")


def test_resumed_trials_continue_in_the_checkpoint_dir_of_the_trial_they_resume(home: Path, tmp_path: Path) -> None:
    ledger = Ledger.open(make_campaign(tmp_path))
    stopped = ledger.admit(Proposal(params=PARAMS)).trial_number
    ledger.admit(Proposal(params={"x": 0.0, "y": 1, "kind": "c"}))
    second = ledger.admit(Proposal(params=PARAMS, resume_of=stopped)).trial_number
    third = ledger.admit(Proposal(params=PARAMS, resume_of=second)).trial_number

    folder = home / "campaigns" / "toy" / "checkpoints" / ledger.identity
    assert ledger.trial(third).resume_of == second
    assert ledger.origin(ledger.trial(third)).number == stopped
    assert ledger.checkpoint_dir(ledger.trial(third)) == folder / f"trial-{stopped}"
    assert ledger.checkpoint_dir(ledger.trial(1)) == folder / "trial-1"


def test_loading_while_the_ledger_is_being_created_waits_for_it(home: Path, tmp_path: Path) -> None:
    """`autoresearch status` in a campaign's first second used to race `open` to create the
    schema ("table studies already exists") or find a study without its config."""
    base = make_campaign(tmp_path)
    for i in range(4):
        campaign = base.model_copy(update={"name": f"race{i}"})
        loaded: list[object] = []

        def load(name: str = campaign.name, loaded: list[object] = loaded) -> None:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    loaded.append(Ledger.load(name).campaign.name)
                    return
                except LedgerError as exc:
                    if "no campaign named" not in str(exc):
                        loaded.append(exc)
                        return
                except Exception as exc:  # noqa: BLE001 - the race under test
                    loaded.append(exc)
                    return

        readers = [threading.Thread(target=load) for _ in range(3)]
        for reader in readers:
            reader.start()
        Ledger.open(campaign)
        for reader in readers:
            reader.join(90)
        assert loaded == [campaign.name] * 3
