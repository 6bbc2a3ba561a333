"""`LedgerReader` (the ledger's SQLite file read with plain sqlite3) gives what the Optuna-storage
reader `Ledger.load` gives, for every kind of trial, after more writes, and after a start-over."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import optuna
import pytest

from autoresearch.campaign import (
    CampaignState,
    Ledger,
    LedgerError,
    LedgerReader,
    Proposal,
    TrialFailure,
    TrialState,
    campaign_status,
    status_of,
)
from tests.autoresearch.campaign.conftest import make_campaign

NOW = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture
def far_zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Local time 9 h off UTC, so trial times read without Optuna's UTC -> local step would differ."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def _same_as_optuna(reader: LedgerReader, name: str) -> None:
    """The direct read equals `Ledger.load(name)`: trials, facts, config, and the status built from them."""
    snapshot = reader.read()
    loaded = Ledger.load(name)
    assert repr(snapshot.trials) == repr(loaded.trials())  # repr: a NaN intermediate value equals itself
    assert snapshot.facts == loaded.facts()
    assert snapshot.campaign == loaded.campaign
    assert snapshot.storage_url == loaded.storage_url
    status = status_of(snapshot.campaign, snapshot.facts, snapshot.trials, snapshot.paths.root, NOW)
    assert status == campaign_status(loaded, NOW)


def test_the_direct_read_equals_the_optuna_storage_read(home: Path, tmp_path: Path, far_zone: None) -> None:
    writer = Ledger.open(make_campaign(tmp_path, budget={"max_trials": 30, "max_parallel": 4}), cache=True)
    for i, kind in enumerate("abcabc"):
        writer.admit(Proposal(params={"x": i / 2 - 1.0, "y": i, "kind": kind}, rationale=f"r{i}", patch="--- a\n"))
    for number in range(5):
        writer.mark_launched(number, f"job-{number:010d}")
        writer.set_mlflow_run(number, f"run{number}")
    writer.report(0, 1, 3.5)
    writer.report(0, 2, float("inf"))  # stored as INF_POS, read back as inf
    writer.complete(0, 7.25, gpu_seconds=30.0)
    writer.report(1, 1, 2.0)
    writer.prune(1, gpu_seconds=10.0)  # its value: the last intermediate value
    writer.fail(2, TrialFailure.user, log_excerpt="Traceback ...\nValueError: bad lr", gpu_seconds=5.0)
    writer.cancel(3, "stopped from chat")
    writer.report(4, 1, float("nan"))  # stored as NAN; 4 runs on; 5 is proposed, not launched
    writer.set_mlflow_experiment("17")
    writer.append_note("tried the corners first")
    writer.add_llm_cost(0.42)
    half = optuna.load_study(study_name="toy", storage=writer.storage_url).ask()  # asked, parameters not drawn
    half.suggest_float("x", -5.0, 5.0)
    writer.study_view().enqueue_trial({"x": 0.5, "y": 2, "kind": "b"})  # queued (WAITING): proposed, fixed params

    reader = LedgerReader("toy")
    _same_as_optuna(reader, "toy")
    states = [t.state for t in reader.read().trials]
    assert states == [TrialState.complete, TrialState.pruned, TrialState.failed, TrialState.cancelled,
                      TrialState.running, TrialState.proposed, TrialState.proposed]  # fmt: skip
    first = reader.read().trials[0]
    assert first.intermediate_values == {1: 3.5, 2: float("inf")} and first.mlflow_run_id == "run0"

    # more writes: the reader keeps the ended trials and reads the new and unfinished ones again
    writer.complete(4, 1.0, gpu_seconds=1.0)
    writer.mark_launched(5, "job-0000000005")
    writer.admit(Proposal(params={"x": 2.0, "y": 1, "kind": "c"}))
    writer.set_state(CampaignState.paused, "checking the data")
    _same_as_optuna(reader, "toy")
    assert [t.state for t in reader.read().trials][4:6] == [TrialState.complete, TrialState.running]


def test_a_campaign_started_over_is_read_afresh(home: Path, tmp_path: Path) -> None:
    writer = Ledger.open(make_campaign(tmp_path))
    writer.admit(Proposal(params={"x": 1.0, "y": 3, "kind": "b"}))
    writer.mark_launched(0, "job-0000000000")
    writer.complete(0, 9.5)
    reader = LedgerReader("toy")
    assert [t.value for t in reader.read().trials] == [9.5]

    shutil.rmtree(home / "campaigns" / "toy")
    with pytest.raises(LedgerError, match="no campaign named 'toy'"):
        reader.read()
    again = Ledger.open(make_campaign(tmp_path))
    again.admit(Proposal(params={"x": 0.0, "y": 0, "kind": "a"}))
    again.mark_launched(0, "job-0000000001")
    again.fail(0, TrialFailure.user, log_excerpt="boom")
    _same_as_optuna(reader, "toy")  # not the old trial 0 it kept
    assert [t.state for t in reader.read().trials] == [TrialState.failed]


def test_the_sql_is_what_sqlalchemy_compiles_from_optunas_models() -> None:
    """The reader's SQL is kept as text (so reading imports no SQLAlchemy); it must stay what the
    select on the pinned Optuna's table models compiles to for SQLite."""
    import sqlalchemy
    from optuna.storages._rdb import models
    from sqlalchemy.dialects import sqlite

    from autoresearch.campaign.ledger._optuna_internals import QUERIES

    def of_ids(table: sqlalchemy.Table) -> sqlalchemy.ColumnElement[bool]:
        ids = sqlalchemy.select(sqlalchemy.column("value")).select_from(sqlalchemy.func.json_each(sqlalchemy.bindparam("ids")))
        return table.c.trial_id.in_(ids)

    studies, attrs = models.StudyModel.__table__, models.StudyUserAttributeModel.__table__
    trials, values = models.TrialModel.__table__, models.TrialValueModel.__table__
    params, steps = models.TrialParamModel.__table__, models.TrialIntermediateValueModel.__table__
    user, system = models.TrialUserAttributeModel.__table__, models.TrialSystemAttributeModel.__table__
    c = sqlalchemy.select
    expected = {
        "study": c(studies.c.study_id).where(studies.c.study_name == sqlalchemy.bindparam("name")),
        "study_attrs": c(attrs.c.key, attrs.c.value_json).where(attrs.c.study_id == sqlalchemy.bindparam("study")),
        "trials": c(trials.c.trial_id, trials.c.number, trials.c.state, trials.c.datetime_start,
                    trials.c.datetime_complete).where(trials.c.study_id == sqlalchemy.bindparam("study"))
                  .order_by(trials.c.trial_id),
        "values": c(values.c.trial_id, values.c.objective, values.c.value, values.c.value_type).where(of_ids(values)),
        "params": c(params.c.trial_id, params.c.param_name, params.c.param_value, params.c.distribution_json)
                  .where(of_ids(params)).order_by(params.c.param_id),
        "steps": c(steps.c.trial_id, steps.c.step, steps.c.intermediate_value, steps.c.intermediate_value_type)
                 .where(of_ids(steps)),
        "user_attrs": c(user.c.trial_id, user.c.key, user.c.value_json).where(of_ids(user)),
        "system_attrs": c(system.c.trial_id, system.c.key, system.c.value_json).where(of_ids(system)),
    }  # fmt: skip
    assert set(QUERIES) == set(expected)
    for name, statement in expected.items():
        compiled = statement.compile(dialect=sqlite.dialect())
        assert QUERIES[name] == str(compiled), name
        assert len(compiled.positiontup or ()) == 1, name  # each binds one parameter


@pytest.mark.filterwarnings("ignore::FutureWarning")  # the legacy IntUniformDistribution, decoded on purpose
def test_stored_values_decode_as_optuna_decodes_them(far_zone: None) -> None:
    from optuna.distributions import (
        CategoricalDistribution, FloatDistribution, IntDistribution, distribution_to_json, json_to_distribution,
    )  # fmt: skip
    from optuna.storages._rdb import models
    from sqlalchemy.dialects import sqlite

    from autoresearch.campaign.ledger._optuna_internals import external_value, stored_float, stored_time

    kinds = [
        (FloatDistribution(1e-4, 1e-1, log=True), 0.003),
        (FloatDistribution(0.0, 1.0, step=0.25), 0.75),
        (IntDistribution(16, 256), 17.0),
        (IntDistribution(1, 1024, log=True), 64.0),
        (CategoricalDistribution(("relu", None, True, 3, 2.5)), 1.0),
        (CategoricalDistribution(("relu", None, True, 3, 2.5)), 2.0),
        (CategoricalDistribution(("relu", None, True, 3, 2.5)), 4.0),
    ]
    for distribution, internal in kinds:
        text = distribution_to_json(distribution)
        assert repr(external_value(text)(internal)) == repr(distribution.to_external_repr(internal)), text
    legacy = '{"name": "IntUniformDistribution", "attributes": {"low": 1, "high": 9, "step": 1}}'
    abbreviated = '{"type": "categorical", "choices": ["a", "b"]}'  # a form the ledger never writes: Optuna decodes it
    for text, internal in [(legacy, 3.0), (abbreviated, 1.0)]:
        assert repr(external_value(text)(internal)) == repr(json_to_distribution(text).to_external_repr(internal))

    value_types = models.TrialValueModel.TrialValueType
    for value, kind in [(1.5, value_types.FINITE), (None, value_types.INF_POS), (None, value_types.INF_NEG)]:
        assert stored_float(value, kind.name) == models.TrialValueModel.stored_repr_to_value(value, kind)
    step_types = models.TrialIntermediateValueModel.TrialIntermediateValueType
    for value, step_kind in [(2.0, step_types.FINITE), (None, step_types.INF_POS), (None, step_types.NAN)]:
        expected = models.TrialIntermediateValueModel.stored_repr_to_intermediate_value(value, step_kind)
        assert repr(stored_float(value, step_kind.name)) == repr(expected)

    decode = models.TrialModel.__table__.c.datetime_start.type.dialect_impl(sqlite.dialect()).result_processor(
        sqlite.dialect(), None
    )
    text = "2030-01-01 08:30:15.250000"
    utc = decode(text)
    assert stored_time(text) == utc.replace(tzinfo=UTC).astimezone().replace(tzinfo=None)
    assert stored_time(text).hour == 17  # Asia/Tokyo: what RDBStorage hands out, in local time
    assert stored_time(None) is None


def test_reading_a_ledger_imports_neither_optuna_nor_sqlalchemy(home: Path, tmp_path: Path) -> None:
    """What the dashboard's campaign pages import: a cold page pays for the config and the read, not
    for Optuna (numpy) or SQLAlchemy."""
    writer = Ledger.open(make_campaign(tmp_path))
    writer.admit(Proposal(params={"x": 1.0, "y": 3, "kind": "b"}))
    writer.mark_launched(0, "job-0000000000")
    writer.complete(0, 9.5)
    script = (
        "import sys\n"
        "from autoresearch.campaign import LedgerReader, status_of\n"
        "snap = LedgerReader('toy').read()\n"
        "status_of(snap.campaign, snap.facts, snap.trials, snap.paths.root)\n"
        "assert [t.value for t in snap.trials] == [9.5], snap.trials\n"
        "print(sorted(m for m in ('optuna', 'sqlalchemy', 'numpy', 'mlflow', 'langgraph') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "[]", out.stderr
