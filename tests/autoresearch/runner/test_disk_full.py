"""A full disk (issue 20 item 8): a trial whose job dies of ENOSPC is not spent and the campaign
pauses with what to do; a full disk under the runner itself pauses it too, with a message and no
traceback. The ENOSPC is real: writes to /dev/full, which the kernel answers with it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from autoresearch.campaign import CampaignState, Ledger, LedgerError, PolicyKind, TrialState
from autoresearch.policy import OptunaPolicy
from autoresearch.runner import Start, run_campaign
from autoresearch.runner.errors import disk_full
from autoresearch.steering import post
from compute.testing.jobs import wait_until
from tests.autoresearch.runner.conftest import FAST, Background, campaign_of, synthetic_config

pytestmark = pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")

FILL = "f = open('/dev/full', 'w'); f.write('checkpoint'); f.flush()"
"""A job that writes its checkpoint to a full disk: OSError [Errno 28] No space left on device."""


def test_a_job_killed_by_a_full_disk_pauses_the_campaign_and_spends_no_trial(compute_home: Path, tracking) -> None:
    data = synthetic_config(tracking, budget={"max_trials": 3, "max_parallel": 1})
    data["command"] = [sys.executable, "-c", FILL]
    runner = Background(lambda: run_campaign(campaign_of(data), home=compute_home, settings=FAST))

    paused = wait_until(lambda: _paused(data["name"], compute_home), timeout=120, what="the campaign to pause")
    assert "ran out of disk space" in paused.state_reason and "No space left on device" in paused.state_reason
    assert f"`autoresearch resume {data['name']}` continues" in paused.state_reason
    [trial] = paused.trials()
    assert trial.state is TrialState.cancelled  # not spent: it counts toward no budget
    assert trial.failure_rule == "disk_full"  # the classifier's verdict, as data: what the runner paused on
    post(data["name"], "stop", {"reason": "test over"}, author="test", home=compute_home)  # the paused runner waits
    outcome = runner.join()
    assert outcome.state is CampaignState.stopped and outcome.status.budget_used.trials == 0


def _paused(name: str, home: Path) -> Ledger | None:
    try:
        ledger = Ledger.load(name, home)
    except LedgerError:
        return None  # the runner has not opened it yet
    return ledger if ledger.state is CampaignState.paused else None


class _FullDisk(OptunaPolicy):
    """The Optuna policy, saving its state to a full disk before each proposal (as a policy that
    writes a prompt log or a sampler snapshot would)."""

    def propose(self, ctx, n):  # type: ignore[no-untyped-def]
        with open("/dev/full", "w") as state:
            state.write("sampler state")
        return super().propose(ctx, n)


def test_a_full_disk_under_the_runner_pauses_the_campaign_with_a_message(compute_home: Path, tracking) -> None:
    data = synthetic_config(tracking, budget={"max_trials": 2, "max_parallel": 2})

    def factory(kind, campaign, ledger):  # type: ignore[no-untyped-def]
        assert kind is PolicyKind.optuna
        return _FullDisk(ledger, campaign.policy)

    outcome = run_campaign(campaign_of(data), home=compute_home, settings=FAST, policy_factory=factory)

    assert outcome.state is CampaignState.paused
    assert outcome.reason.startswith("paused: the disk is full (OSError: [Errno 28] No space left on device)")
    assert f"then `autoresearch resume {data['name']}`" in outcome.reason
    assert not (Path(compute_home) / "campaigns" / data["name"] / "runner-error.log").exists()  # no traceback
    resumed = run_campaign(campaign_of(data), home=compute_home, settings=FAST, start=Start.resume)
    assert resumed.state is CampaignState.completed, resumed.reason  # space freed: it goes on


def test_disk_full_is_recognised_through_wrapped_errors(tmp_path: Path) -> None:
    import sqlite3

    db = sqlite3.connect(tmp_path / "small.db")
    db.execute("PRAGMA max_page_count = 2")  # SQLite answers SQLITE_FULL, as on a full disk
    try:
        try:
            db.execute("CREATE TABLE t (x)")
            db.execute("INSERT INTO t VALUES (zeroblob(100000))")
        except sqlite3.OperationalError as inner:
            assert "database or disk is full" in str(inner)
            raise RuntimeError("StorageInternalError: could not log the metric") from inner
    except RuntimeError as wrapped:
        assert disk_full(wrapped)
    assert not disk_full(ValueError("the disk is fine"))


def test_an_error_that_quotes_a_full_disk_is_not_one() -> None:
    # a policy error quoting a trial's log: the runner's own disk is fine, so it must not pause for it
    quoting = ValueError("trial 3 failed: OSError: [Errno 28] No space left on device (its node's scratch disk)")
    assert not disk_full(quoting)
    assert disk_full(OSError(28, "No space left on device"))


OOM_AFTER_A_WARNING = ("print('warning: cache: No space left on device; going on without it', flush=True); "
                       "raise SystemExit('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB')")
"""A job that warns of a full cache disk, then dies of GPU memory: the classifier says cuda_oom."""


def test_a_job_that_mentions_a_full_disk_but_died_of_another_cause_fails_its_trial(compute_home: Path,
                                                                                    tracking) -> None:
    data = synthetic_config(tracking, budget={"max_trials": 1, "max_parallel": 1})
    data["command"] = [sys.executable, "-c", OOM_AFTER_A_WARNING]
    runner = Background(lambda: run_campaign(campaign_of(data), home=compute_home, settings=FAST))

    paused = wait_until(lambda: runner.done or _paused(data["name"], compute_home), timeout=120, what="the run")
    if isinstance(paused, Ledger):  # wrongly paused: stop the waiting runner, then fail
        post(data["name"], "stop", {"reason": "test over"}, author="test", home=compute_home)
    runner.join()
    [trial] = Ledger.load(data["name"], compute_home).trials()
    assert (trial.state, trial.failure_class, trial.failure_rule) == (TrialState.failed, "resource", "cuda_oom")
    assert not isinstance(paused, Ledger), paused.state_reason
