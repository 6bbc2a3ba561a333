"""The writer's `MirroredStorage`: what a sampler reads from memory is what the SQLite study holds."""

from __future__ import annotations

import math
import sqlite3
from contextlib import closing
from datetime import datetime
from pathlib import Path

import optuna
import pytest
import sqlalchemy
from optuna.distributions import FloatDistribution, distribution_to_json
from optuna.storages import RDBStorage
from optuna.storages._rdb.models import TrialIntermediateValueModel, TrialValueModel
from optuna.trial import FrozenTrial

from autoresearch.campaign import CampaignState, Ledger, Proposal, TrialFailure
from autoresearch.campaign.ledger._mirror import MirroredStorage, write_trial
from autoresearch.campaign.ledger._optuna_store import sqlite_storage
from autoresearch.campaign.ledger._trial_writes import statements
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
            ledger.report_steps(number, {1: 9.0, 3: 0.25, 2: float("inf")})  # step 1 is kept as first recorded
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


def _traced(storage: RDBStorage) -> list[str]:
    """The SQL every connection `storage` hands out from now on runs (values filled in, as SQLite traces it)."""
    trace: list[str] = []
    sqlalchemy.event.listen(
        storage.engine, "checkout", lambda dbapi, _record, _proxy: dbapi.set_trace_callback(trace.append)
    )
    return trace


def _admitted(tmp_path: Path) -> tuple[Ledger, RDBStorage, int]:
    """A ledger with one proposed trial, a second storage on its file, and the trial's id."""
    ledger = Ledger.open(make_campaign(tmp_path))
    number = ledger.admit(Proposal(params={"x": 1.0, "y": 2, "kind": "b"})).trial_number
    storage = sqlite_storage(ledger.path)
    return ledger, storage, storage.get_trial_id_from_study_id_trial_number(ledger._study_id, number)


@pytest.mark.parametrize("mirrored", [False, True], ids=["rdb", "mirror"])
def test_write_trial_sets_attributes_and_ends_the_trial_in_one_transaction(
    home: Path, tmp_path: Path, mirrored: bool
) -> None:
    _, storage, trial_id = _admitted(tmp_path)
    trace = _traced(storage)
    target = MirroredStorage(storage) if mirrored else storage
    write_trial(target, trial_id, {"a": 1, "b": "two", "c": [3]}, optuna.trial.TrialState.COMPLETE, [4.0],
                steps=[(1, 2.0), (2, float("nan"))])  # fmt: skip
    assert trace[0] == "BEGIN IMMEDIATE" and trace[-1] == "COMMIT"
    assert [line.split()[0] for line in trace[1:-1]] == ["SELECT", *["INSERT"] * 6, "UPDATE"]

    trial = storage.get_trial(trial_id)
    assert trial.user_attrs["a"] == 1 and trial.user_attrs["c"] == [3] and trial.value == 4.0
    assert trial.intermediate_values[1] == 2.0 and math.isnan(trial.intermediate_values[2])
    assert trial.state is optuna.trial.TrialState.COMPLETE and trial.datetime_complete is not None


@pytest.mark.parametrize("mirrored", [False, True], ids=["rdb", "mirror"])
def test_a_campaign_state_and_its_reason_are_written_in_one_transaction(
    home: Path, tmp_path: Path, mirrored: bool
) -> None:
    """A reader between two commits saw a campaign paused with an empty reason."""
    campaign = make_campaign(tmp_path)
    path = Ledger.open(campaign).path
    storage = sqlite_storage(path)
    target = MirroredStorage(storage) if mirrored else storage
    ledger = Ledger(campaign, target, path, cache=mirrored)
    trace = _traced(storage)
    if isinstance(target, MirroredStorage):
        target._connection.set_trace_callback(trace.append)  # its own connection, made before the trace began

    ledger.set_state(CampaignState.paused, "paused: the disk is full")

    writes = trace[trace.index("BEGIN IMMEDIATE"):]  # before it: the reads of the facts as they were
    assert [line.split()[0] for line in writes] == ["BEGIN", "INSERT", "INSERT", "INSERT", "COMMIT"]  # state, reason, ended_at
    assert sum(line.split()[0] in ("INSERT", "UPDATE", "COMMIT") for line in trace) == 4
    reader = Ledger.load(campaign.name)
    assert reader.state is CampaignState.paused and reader.state_reason == "paused: the disk is full"


def test_the_sql_a_write_runs_is_what_sqlalchemy_sends_for_its_statements(home: Path, tmp_path: Path) -> None:
    """Each compiled statement, with the same values, against SQLAlchemy's own execution of the
    statement it was compiled from: an Optuna or SQLAlchemy upgrade that changes either fails here."""
    _, storage, trial_id = _admitted(tmp_path)
    study_id = storage.get_study_id_from_name("toy")
    other = MirroredStorage(storage).create_new_trial(study_id)
    sent: list[tuple[str, tuple]] = []
    sqlalchemy.event.listen(storage.engine, "before_cursor_execute",
                            lambda _c, _cur, statement, parameters, _ctx, _many: sent.append((statement, parameters)))  # fmt: skip
    when = datetime(2026, 12, 4, 20, 7, 34, 452916)
    samples = {"ids": [trial_id, other], "id": trial_id, "trial_id": trial_id, "param_name": "w",
               "param_value": 0.25, "distribution_json": distribution_to_json(FloatDistribution(0, 1)),
               "key": "k", "value_json": '{"v": 1}', "objective": 0, "state": optuna.trial.TrialState.COMPLETE,
               "ended": when, "datetime_start": when, "number": 7, "study_id": study_id}  # fmt: skip
    sql = statements()
    compiled = [sql.states(1), sql.states(2), sql.insert_params, sql.upsert_system_attrs, sql.upsert_user_attrs,
                sql.set_state, sql.end_state, sql.insert_trial, sql.upsert_study_attrs]  # fmt: skip
    compiled += [sql.upsert_values] * 2 + [sql.upsert_steps] * 2
    values = [(1.5, TrialValueModel.TrialValueType.FINITE), (None, TrialValueModel.TrialValueType.INF_POS)]
    steps = [(0.5, TrialIntermediateValueModel.TrialIntermediateValueType.FINITE),
             (None, TrialIntermediateValueModel.TrialIntermediateValueType.NAN)]  # fmt: skip
    for one in compiled:
        params = {key: samples[key] for key in one.keys if key in samples}
        if one is sql.upsert_values:
            params.update(dict(zip(("value", "value_type"), values.pop(), strict=True)))
        if one is sql.upsert_steps:
            params.update(dict(zip(("step", "intermediate_value", "intermediate_value_type"), (3, *steps.pop()),
                                   strict=True)))  # fmt: skip
        if one.keys == ("ids",):
            params["ids"] = params["ids"][: len(one.slots)]
        sent.clear()
        with storage.engine.connect() as conn:
            conn.execute(one.statement, params)
            conn.rollback()
        assert sent == [(one.text, one.args(params))]


@pytest.mark.parametrize("missing", [False, True], ids=["fails-mid-way", "missing-trial"])
def test_a_write_that_fails_part_way_leaves_nothing_written(home: Path, tmp_path: Path, missing: bool) -> None:
    ledger, rdb, trial_id = _admitted(tmp_path)
    storage = MirroredStorage(rdb)
    before = [_fields(t) for t in storage.get_all_trials(ledger._study_id)]
    storage.set_trial_param(trial_id, "z", 0.5, FloatDistribution(0, 1))
    storage.set_trial_system_attr(trial_id, "liar", True)
    if missing:  # the held-back parameter with a write to a trial that does not exist, in one transaction
        with pytest.raises(KeyError, match="No trial with trial_id 999"):
            storage.write_trial(999, {"a": 1}, optuna.trial.TrialState.COMPLETE, [1.0])
    else:  # the parameter and system attribute are inserted, then a user attribute that is not JSON
        with pytest.raises(TypeError, match="not JSON serializable"):
            storage.write_trial(trial_id, {"a": 1, "b": object()}, optuna.trial.TrialState.COMPLETE, [1.0])

    fresh = optuna.load_study(study_name="toy", storage=sqlite_storage(ledger.path)).get_trials()
    assert [_fields(t) for t in fresh] == before
    with closing(sqlite3.connect(ledger.path, timeout=0)) as other:  # and the file is not left locked
        other.execute("BEGIN IMMEDIATE")
        other.rollback()
    storage.write_trial(trial_id, {"a": 1}, optuna.trial.TrialState.COMPLETE, [1.0])  # held back, then committed
    fresh = optuna.load_study(study_name="toy", storage=sqlite_storage(ledger.path)).get_trials()
    assert [_fields(t) for t in fresh] == [_fields(t) for t in storage.get_all_trials(ledger._study_id)]
    assert fresh[0].params["z"] == 0.5 and fresh[0].system_attrs["liar"] is True and fresh[0].value == 1.0
