"""The conformance suite of the `TrialLedger` protocol: every ledger must pass every test.

Subclass `LedgerSuite` in a test module and give it a `harness` fixture (a `LedgerHarness`),
parametrized over the implementations::

    class TestLedger(LedgerSuite):
        @pytest.fixture(params=["optuna"])
        def harness(self, tmp_path, monkeypatch) -> LedgerHarness:
            monkeypatch.setenv("AUTORESEARCH_HOME", str(tmp_path / "home"))
            return LedgerHarness(open=lambda c, cache: Ledger.open(c, cache=cache), load=Ledger.load,
                                 base_dir=tmp_path)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autoresearch.campaign import (
    CampaignState,
    LedgerError,
    Proposal,
    TrialFailure,
    TrialLedger,
    TrialState,
)
from autoresearch.campaign.config import Campaign
from autoresearch.campaign.validity import AttemptProvenance, Provenance
from autoresearch.testing._checks import raises, suite_campaign

PARAMS = {"x": 1.5, "y": 3, "kind": "b"}
OTHER = {"x": -2.0, "y": 0, "kind": "a"}


@dataclass(frozen=True)
class LedgerHarness:
    """How the suite makes the ledgers of one implementation."""

    open: Callable[[Campaign, bool], TrialLedger]
    """`(campaign, cache)` -> the campaign's writer (as the runner holding its lock opens it).
    Opening again is a restart: it must see what the last writer wrote."""
    load: Callable[[str], TrialLedger]
    """Campaign name -> a reader (status, chat, the report)."""
    base_dir: Path
    """A folder the suite's campaigns run in."""

    def campaign(self, name: str = "suite", **overrides: object) -> Campaign:
        return suite_campaign(self.base_dir, name, **overrides)


def _admitted(ledger: TrialLedger, params: dict[str, object], **story: object) -> int:
    number = ledger.admit(Proposal.model_validate({"params": params, **story})).trial_number
    assert number is not None, "admit returned no trial number"
    return number


def _launched(ledger: TrialLedger, params: dict[str, object], job: str) -> int:
    number = _admitted(ledger, params)
    ledger.mark_launched(number, job)
    return number


class LedgerSuite:
    """The rules of the `TrialLedger` protocol, one test each, on the `harness` fixture's ledgers."""

    def test_admit_numbers_proposals_in_order(self, harness: LedgerHarness) -> None:
        ledger = harness.open(harness.campaign(), False)
        first = ledger.admit(Proposal(params=PARAMS, rationale="center", hypothesis="x near 1", patch="--- a\n+++ b\n"))
        second = ledger.admit(Proposal(params={"x": -2, "y": 0, "kind": "a"}))
        assert (first.trial_number, second.trial_number) == (0, 1)
        assert second.params == OTHER  # stored as the space's types
        record = ledger.trial(0)
        assert (record.state, record.params, record.rationale, record.hypothesis) == (
            TrialState.proposed, PARAMS, "center", "x near 1",
        )  # fmt: skip
        assert record.patch == "--- a\n+++ b\n" and [t.number for t in ledger.unlaunched()] == [0, 1]

    def test_admit_refuses_params_outside_the_space(self, harness: LedgerHarness) -> None:
        ledger = harness.open(harness.campaign(), False)
        with raises(ValueError, "x=9.0 is outside"):
            ledger.admit(Proposal(params={"x": 9.0, "y": 2, "kind": "a"}))
        with raises(ValueError, "kind is missing"):
            ledger.admit(Proposal(params={"x": 1.0, "y": 2}))
        assert ledger.trials() == []

    def test_admit_describes_a_proposed_trial(self, harness: LedgerHarness) -> None:
        ledger = harness.open(harness.campaign(), False)
        number = _admitted(ledger, PARAMS)
        again = ledger.admit(Proposal(params=PARAMS, trial_number=number, rationale="why"))
        assert again.trial_number == number and ledger.trial(0).rationale == "why" and len(ledger.trials()) == 1
        ledger.mark_launched(0, "job-0")
        with raises(LedgerError, "is running, not proposed"):
            ledger.admit(Proposal(params=PARAMS, trial_number=0))

    def test_every_verdict(self, harness: LedgerHarness) -> None:
        ledger = harness.open(harness.campaign(), False)
        numbers = [_launched(ledger, PARAMS, f"job-{i}") for i in range(5)]
        assert [t.number for t in ledger.running()] == numbers and ledger.trial(0).job_id == "job-0"
        done = ledger.complete(0, 8.5, gpu_seconds=120.0)
        assert (done.state, done.value, done.gpu_seconds) == (TrialState.complete, 8.5, 120.0)
        ledger.report(1, 3, 2.5)
        assert (ledger.prune(1).state, ledger.trial(1).value) == (TrialState.pruned, 2.5)  # its last value
        failed = ledger.fail(2, TrialFailure.resource, log_excerpt="CUDA out of memory")
        assert (failed.state, failed.failure_class, failed.log_excerpt) == (
            TrialState.failed, TrialFailure.resource, "CUDA out of memory",
        )  # fmt: skip
        nan = ledger.complete(3, float("nan"))
        assert (nan.state, nan.failure_class, nan.value) == (TrialState.failed, TrialFailure.non_finite, None)
        cancelled = ledger.cancel(4, "campaign stopped")
        assert (cancelled.state, cancelled.value, cancelled.log_excerpt) == (TrialState.cancelled, None, "campaign stopped")
        assert all(t.started_at is not None and t.ended_at is not None for t in ledger.trials())
        assert ledger.running() == [] and ledger.unlaunched() == []

    def test_prunes_and_disk_full_cancels_are_recorded_as_data(self, harness: LedgerHarness) -> None:
        ledger = harness.open(harness.campaign(), True)
        pruning, full = _launched(ledger, PARAMS, "job-0"), _launched(ledger, OTHER, "job-1")
        ledger.report(pruning, 3, 2.5)
        ledger.mark_pruning(pruning, 3)
        assert (ledger.trial(pruning).state, ledger.trial(pruning).prune_step) == (TrialState.running, 3)
        assert harness.open(harness.campaign(), True).trial(pruning).prune_step == 3, "a restarted runner reads the ask"
        cancelled = ledger.cancel(full, "its job ran out of disk space", rule="disk_full")
        assert (cancelled.state, cancelled.failure_rule) == (TrialState.cancelled, "disk_full")
        assert ledger.cancel(full, "again").failure_rule == "disk_full"  # the first verdict wins
        assert harness.load("suite").trials() == ledger.trials()

    def test_first_verdict_wins(self, harness: LedgerHarness) -> None:
        ledger = harness.open(harness.campaign(), True)
        for i in range(3):
            _launched(ledger, PARAMS, f"job-{i}")
        ledger.complete(0, 8.5)
        ledger.prune(1)
        ledger.cancel(2, "stopped")
        for verdict in (
            lambda n: ledger.complete(n, 1.0),
            lambda n: ledger.fail(n, TrialFailure.user),
            lambda n: ledger.prune(n),
            lambda n: ledger.cancel(n, "again"),
        ):
            before = [ledger.trial(n) for n in range(3)]
            assert [verdict(n) for n in range(3)] == before and [ledger.trial(n) for n in range(3)] == before
        assert ledger.trial(0).value == 8.5 and harness.load("suite").trials() == ledger.trials()

    def test_report_once_per_step_and_only_while_running(self, harness: LedgerHarness) -> None:
        ledger = harness.open(harness.campaign(), True)
        n = _launched(ledger, PARAMS, "job-0")
        ledger.report(n, 1, 4.0)
        ledger.report(n, 1, 99.0)  # evaluate may run again after a resume
        ledger.report(n, 2, 5.0)
        ledger.complete(n, 6.0)
        ledger.report(n, 3, 7.0)
        assert ledger.trial(n).intermediate_values == {1: 4.0, 2: 5.0}
        assert harness.load("suite").trial(n).intermediate_values == {1: 4.0, 2: 5.0}

    def test_unknown_trial_is_a_ledger_error(self, harness: LedgerHarness) -> None:
        ledger = harness.open(harness.campaign(), False)
        ledger.admit(Proposal(params=PARAMS))
        with raises(LedgerError, "has no trial 9"):
            ledger.trial(9)
        with raises(LedgerError, "has no trial 9"):
            ledger.complete(9, 1.0)

    def test_single_writer_readers_refuse_writes(self, harness: LedgerHarness) -> None:
        writer = harness.open(harness.campaign(), True)
        n = _launched(writer, PARAMS, "job-0")
        reader = harness.load("suite")
        before = (reader.trials(), reader.facts())
        writes = {
            "admit": lambda: reader.admit(Proposal(params=OTHER)),
            "mark_launched": lambda: reader.mark_launched(n, "job-9"),
            "set_mlflow_run": lambda: reader.set_mlflow_run(n, "run"),
            "report": lambda: reader.report(n, 0, 1.0),
            "complete": lambda: reader.complete(n, 1.0),
            "prune": lambda: reader.prune(n),
            "fail": lambda: reader.fail(n, TrialFailure.user),
            "cancel": lambda: reader.cancel(n),
            "mark_pruning": lambda: reader.mark_pruning(n, 3),
            "set_state": lambda: reader.set_state(CampaignState.paused, "x"),
            "append_note": lambda: reader.append_note("x"),
            "add_llm_cost": lambda: reader.add_llm_cost(1.0),
            "set_campaign": lambda: reader.set_campaign(reader.campaign),
        }
        for name, write in writes.items():
            with raises(LedgerError, "reader", what=f"a reader's {name}"):
                write()
        assert (harness.load("suite").trials(), harness.load("suite").facts()) == before, "a refused write changed the store"

    def test_readers_see_the_writers_last_write(self, harness: LedgerHarness) -> None:
        writer = harness.open(harness.campaign(), True)
        reader = harness.load("suite")
        assert reader.trials() == []
        n = _launched(writer, PARAMS, "job-0")
        assert reader.trial(n).state is TrialState.running
        writer.complete(n, 3.0)
        writer.append_note("learned a thing", author="policy")
        assert reader.trial(n).value == 3.0 and [x.text for x in reader.notes()] == ["learned a thing"]
        assert reader.best() == writer.best() == writer.trial(n)

    def test_cached_and_fresh_reads_agree(self, harness: LedgerHarness) -> None:
        cached = harness.open(harness.campaign(), True)
        fresh = harness.load("suite")

        def agree() -> None:
            assert cached.trials() == fresh.trials()
            assert cached.facts() == fresh.facts()
            assert cached.campaign == fresh.campaign

        agree()
        steps = [
            lambda: cached.admit(Proposal(params=PARAMS, hypothesis="h")),
            lambda: cached.admit(Proposal(params=OTHER)),
            lambda: cached.mark_launched(0, "job-0"),
            lambda: cached.set_mlflow_run(0, "run-0"),
            lambda: cached.report(0, 1, 2.0),
            lambda: cached.complete(0, 5.0, gpu_seconds=10.0),
            lambda: cached.mark_launched(1, "job-1"),
            lambda: cached.fail(1, TrialFailure.user, log_excerpt="Traceback"),
            lambda: cached.set_state(CampaignState.paused, "a person paused it"),
            lambda: cached.add_llm_cost(0.25),
            lambda: cached.append_note("note", author="chat"),
            lambda: cached.set_mlflow_experiment("7"),
            lambda: cached.update_facts(llm_usage={"total": {"calls": 1}}, llm_run_id="run-llm"),
            lambda: cached.set_campaign(cached.campaign.model_copy(update={"experiment": "other"})),
        ]
        for step in steps:
            step()
            agree()

    def test_resume_sees_the_same_trials(self, harness: LedgerHarness) -> None:
        campaign = harness.campaign()
        first = harness.open(campaign, True)
        asked = _admitted(first, PARAMS)
        running = _launched(first, OTHER, "job-1")
        done = _launched(first, PARAMS, "job-2")
        first.report(done, 0, 1.0)
        first.complete(done, 4.0)
        first.add_llm_cost(0.5)
        first.append_note("before the crash", author="runner")
        keys = [first.idempotency_key(n) for n in (asked, running, done)]
        trials, facts = first.trials(), first.facts()
        del first  # the runner died

        again = harness.open(campaign, True)
        assert again.trials() == trials and again.facts() == facts
        assert [t.number for t in again.unlaunched()] == [asked] and [t.number for t in again.running()] == [running]
        assert [again.idempotency_key(n) for n in (asked, running, done)] == keys

    def test_provenance_and_suspect_reruns_round_trip(self, harness: LedgerHarness) -> None:
        campaign = harness.campaign()
        writer = harness.open(campaign, True)
        number = _launched(writer, PARAMS, "job-1")
        seen = Provenance(attempts=[AttemptProvenance(attempt=1, node="n1", gpus=[0], started_at=1.0, ended_at=2.0,
                                                      degraded=["gpu0.sw_thermal_slowdown: throttled"])], speed=4.0)
        writer.record_provenance(number, seen)
        writer.complete(number, 1.0)
        rerun = _admitted(writer, PARAMS, suspect_rerun_of=number)
        assert writer.trial(number).provenance == seen and writer.trial(rerun).suspect_rerun_of == number
        reader = harness.load(campaign.name)
        assert reader.trial(number).provenance == seen and reader.trial(rerun).suspect_rerun_of == number
        assert harness.open(campaign, True).trials() == writer.trials()  # a restart reads the same

    def test_facts_round_trip(self, harness: LedgerHarness) -> None:
        ledger = harness.open(harness.campaign(), False)
        facts = ledger.facts()
        assert (facts.state, facts.state_reason, facts.ended_at, facts.llm_usd, facts.notes) == (
            CampaignState.running, "", None, 0.0, (),
        )  # fmt: skip
        assert ledger.add_llm_cost(0.25) == 0.25 and ledger.add_llm_cost(0.5) == 0.75
        ledger.append_note("lr above 0.05 diverges", author="policy")
        ledger.append_note("focus on x", author="chat")
        ledger.set_mlflow_experiment("12")
        ledger.set_state(CampaignState.completed, "max_trials reached")
        loaded = harness.load("suite").facts()
        assert (loaded.llm_usd, loaded.mlflow_experiment_id, loaded.state_reason) == (0.75, "12", "max_trials reached")
        assert [(n.author, n.text) for n in loaded.notes] == [("policy", "lr above 0.05 diverges"), ("chat", "focus on x")]
        assert loaded.state is CampaignState.completed and loaded.ended_at is not None
        assert loaded.ended_at >= loaded.started_at
        ledger.set_state(CampaignState.running, "the budget was raised")
        assert harness.load("suite").ended_at is None
        with raises(ValueError, "no_such_fact"):
            ledger.update_facts(no_such_fact=1)

    def test_best_is_the_best_complete_trial(self, harness: LedgerHarness) -> None:
        ledger = harness.open(harness.campaign(), True)
        assert ledger.best() is None
        values = {0: 3.0, 1: 7.0, 2: 7.0, 3: 1.0}
        for n, value in values.items():
            _launched(ledger, PARAMS, f"job-{n}")
            ledger.complete(n, value)
        pruned = _launched(ledger, PARAMS, "job-p")
        ledger.report(pruned, 0, 100.0)
        ledger.prune(pruned)  # a better value, but not a complete trial
        best = ledger.best()
        assert best is not None and (best.number, best.value) == (1, 7.0)  # the earliest among equals
        minimize = harness.open(harness.campaign("low", objective={"metric": "score", "mode": "min"}), False)
        for n, value in values.items():
            _launched(minimize, PARAMS, f"job-{n}")
            minimize.complete(n, value)
        assert minimize.best() == minimize.trial(3)

    def test_set_campaign_is_what_readers_load(self, harness: LedgerHarness) -> None:
        ledger = harness.open(harness.campaign(), True)
        budget = ledger.campaign.budget.model_copy(update={"max_trials": 50})
        ledger.set_campaign(ledger.campaign.model_copy(update={"budget": budget}))
        assert ledger.campaign.budget.max_trials == 50 and harness.load("suite").campaign.budget.max_trials == 50

    def test_resumed_trials_share_their_origins_checkpoint(self, harness: LedgerHarness) -> None:
        ledger = harness.open(harness.campaign(), False)
        stopped = _admitted(ledger, PARAMS)
        _admitted(ledger, OTHER)
        second = _admitted(ledger, PARAMS, resume_of=stopped)
        third = _admitted(ledger, PARAMS, resume_of=second)
        assert ledger.origin(ledger.trial(third)).number == stopped
        assert ledger.checkpoint_dir(ledger.trial(third)) == ledger.checkpoint_dir(ledger.trial(stopped))
        assert ledger.checkpoint_dir(ledger.trial(1)) != ledger.checkpoint_dir(ledger.trial(stopped))
