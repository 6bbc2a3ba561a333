"""The writer's `MirroredStorage`: what a sampler reads from memory is what the SQLite study holds."""

from __future__ import annotations

from pathlib import Path

import optuna
import sqlalchemy
from optuna.trial import FrozenTrial

from autoresearch.campaign import Ledger, Proposal, TrialFailure
from autoresearch.campaign.ledger._mirror import MirroredStorage, write_trial
from autoresearch.campaign.ledger._optuna_store import sqlite_storage
from autoresearch.policy import OptunaPolicy, PolicyContext
from tests.autoresearch.campaign.conftest import make_campaign, toy_objective


def _fields(t: FrozenTrial) -> tuple:
    return (t.number, t.state, t.values, t.params, t.distributions, t.user_attrs, t.system_attrs,
            t.intermediate_values, t.datetime_start, t.datetime_complete)  # fmt: skip


def test_a_writer_mirror_agrees_with_a_fresh_read_of_the_study_after_every_kind_of_write(
    home: Path, tmp_path: Path
) -> None:
    campaign = make_campaign(tmp_path, budget={"max_trials": 30, "max_parallel": 3},
                             policy={"kind": "optuna", "sampler": "tpe", "seed": 3})  # fmt: skip
    ledger = Ledger.open(campaign, cache=True)
    assert isinstance(ledger._storage, MirroredStorage)
    policy = OptunaPolicy(ledger)
    for round_ in range(6):
        view = PolicyContext(campaign=ledger.campaign, trials=ledger.trials(), notes=[], steering=[])
        for proposal in policy.propose(view, 3):
            number = ledger.admit(proposal).trial_number
            ledger.set_mlflow_run(number, f"run-{number}")
            ledger.mark_launched(number, f"job-{number}")
            ledger.report(number, 1, 0.5)
            if number % 3 == 0:
                ledger.complete(number, toy_objective(ledger.trial(number).params))
            elif number % 3 == 1:
                ledger.fail(number, TrialFailure.user, log_excerpt="boom")
            else:
                ledger.prune(number)
        ledger.admit(Proposal(params={"x": 0.5, "y": 1, "kind": "a"}, rationale=f"a person's try {round_}"))

    fresh = optuna.load_study(study_name=campaign.name, storage=sqlite_storage(ledger.path))
    mirrored = ledger._storage.get_all_trials(ledger._study_id)
    assert [_fields(t) for t in mirrored] == [_fields(t) for t in fresh.get_trials()]
    assert Ledger.load(campaign.name).trials() == ledger.trials()
    assert len(mirrored) == 24 and sum(t.state.is_finished() for t in mirrored) == 18


def test_write_trial_sets_attributes_and_ends_the_trial_in_one_commit(home: Path, tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path)
    ledger = Ledger.open(campaign)
    number = ledger.admit(Proposal(params={"x": 1.0, "y": 2, "kind": "b"})).trial_number
    storage = sqlite_storage(ledger.path)
    trial_id = storage.get_trial_id_from_study_id_trial_number(ledger._study_id, number)
    commits: list[int] = []
    sqlalchemy.event.listen(storage.engine, "commit", lambda _conn: commits.append(1))
    write_trial(storage, trial_id, {"a": 1, "b": "two", "c": [3]}, optuna.trial.TrialState.COMPLETE, [4.0])
    assert len(commits) == 1

    trial = storage.get_trial(trial_id)
    assert trial.user_attrs["a"] == 1 and trial.user_attrs["c"] == [3] and trial.value == 4.0
    assert trial.state is optuna.trial.TrialState.COMPLETE and trial.datetime_complete is not None
