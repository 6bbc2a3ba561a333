"""`RunPool` on a real MLflow store: spares made ahead (several in one transaction on SQLite), taken
over after a crash, deleted at close."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

import pytest

from autoresearch.runner.run_pool import RunPool
from tracking import (SPARE_TAG, InMemoryTracker, MlflowTracker, QueuedTracker, RunStatus, Tracker, TrackingConfig,
                      TrackingError)  # fmt: skip

TAGS = {"autoresearch.campaign": "pool-test", "autoresearch.campaign_started": "2026-12-01T00:00:00"}


def _ready(pool: RunPool, n: int) -> None:
    deadline = time.monotonic() + 60
    while len(pool._ready) < n:
        assert time.monotonic() < deadline, f"the pool made {len(pool._ready)} of {n} spares"
        time.sleep(0.05)


def test_spares_are_made_ahead_up_to_size_and_limit_then_deleted_at_close(
    tracking: TrackingConfig, experiment_name: str
) -> None:
    tracker = MlflowTracker(tracking)
    experiment = tracker.experiment(experiment_name)
    errors: list[str] = []
    pool = RunPool(tracker, experiment, TAGS, size=2, limit=3, recorded=set(), on_error=errors.append)
    _ready(pool, 2)
    first, second = pool.take(), pool.take()
    _ready(pool, 1)
    third = pool.take()
    time.sleep(0.5)
    assert pool.take() is None, "made more spares than its limit"
    pool.close()

    assert len({first, second, third}) == 3 and not errors
    spares = tracker.find_runs(experiment, {**TAGS, SPARE_TAG: "true"}, status=RunStatus.RUNNING)
    assert sorted(spares) == sorted([first, second, third])  # handed out; the launcher names them


def test_a_new_pool_takes_over_spares_a_killed_runner_left_except_those_a_trial_records(
    tracking: TrackingConfig, experiment_name: str
) -> None:
    tracker = MlflowTracker(tracking)
    experiment = tracker.experiment(experiment_name)
    dead = RunPool(tracker, experiment, TAGS, size=3, limit=3, recorded=set(), on_error=print)
    _ready(dead, 3)
    left = list(dead._ready)  # the runner is killed here (no close): its spares stay RUNNING, one recorded
    with dead._wake:
        dead._closed = True
        dead._wake.notify()

    pool = RunPool(tracker, experiment, TAGS, size=3, limit=0, recorded={left[0]}, on_error=print)
    taken = [pool.take(), pool.take(), pool.take()]
    pool.close()

    assert sorted(r for r in taken if r) == sorted(left[1:]) and taken[2] is None
    running = tracker.find_runs(experiment, TAGS, status=RunStatus.RUNNING)
    assert sorted(running) == sorted(left), "a spare taken over was deleted or a new one made"


def test_close_deletes_the_spares_not_handed_out(tracking: TrackingConfig, experiment_name: str) -> None:
    tracker = MlflowTracker(tracking)
    experiment = tracker.experiment(experiment_name)
    pool = RunPool(tracker, experiment, TAGS, size=2, limit=10, recorded=set(), on_error=print)
    _ready(pool, 2)
    used = pool.take()
    pool.close()

    assert tracker.find_runs(experiment, TAGS) == [used]


class _Counted(MlflowTracker):
    """A real tracker that records how many runs each of its `create_run(s)` calls made."""

    def __init__(self, tracking: TrackingConfig) -> None:
        super().__init__(tracking)
        self.calls: list[int] = []

    def create_runs(
        self, experiment_id: str, n: int, *, name: str | None = None, tags: Mapping[str, str] | None = None
    ) -> list[str]:
        self.calls.append(n)
        return super().create_runs(experiment_id, n, name=name, tags=tags)


@pytest.mark.parametrize("queued", [False, True], ids=["mlflow", "queued"])
def test_on_a_sqlite_store_the_spares_lacking_are_made_in_one_call(
    tracking: TrackingConfig, experiment_name: str, queued: bool
) -> None:
    counted = _Counted(tracking)
    tracker: Tracker = QueuedTracker(counted, on_error=print) if queued else counted
    experiment = tracker.experiment(experiment_name)
    pool = RunPool(tracker, experiment, TAGS, size=4, limit=6, recorded=set(), on_error=print)
    _ready(pool, 4)
    assert counted.calls == [4], "the first four spares were not made together"
    taken = [pool.take() for _ in range(4)]
    _ready(pool, 2)
    time.sleep(0.3)
    assert pool.take() is not None and len(pool._ready) == 1, "made more spares than its limit"
    pool.close()
    if isinstance(tracker, QueuedTracker):
        tracker.close()

    assert sum(counted.calls) == 6 and counted.calls[0] == 4 and None not in taken
    spares = tracker.find_runs(experiment, {**TAGS, SPARE_TAG: "true"}, status=RunStatus.RUNNING)
    assert len(spares) == 5 and set(taken) < set(spares), "the spare not handed out was not deleted"


def test_on_a_sqlite_store_spares_are_made_once_half_are_taken_in_one_batch(
    tracking: TrackingConfig, experiment_name: str
) -> None:
    """A batch of one run costs most of what four do: the pool waits until half its spares are
    taken, then makes the ones it lacks together."""
    counted = _Counted(tracking)
    pool = RunPool(counted, counted.experiment(experiment_name), TAGS, size=4, limit=20, recorded=set(),
                   on_error=print)  # fmt: skip
    _ready(pool, 4)
    pool.take()
    time.sleep(0.3)
    assert counted.calls == [4] and len(pool._ready) == 3, "a spare was made while more than half were ready"
    pool.take()
    _ready(pool, 4)
    pool.close()
    assert counted.calls == [4, 2]


class _OneAtATime(InMemoryTracker):
    """A store that makes runs one by one (as an http one): each `create_run` waits for a `go`."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Semaphore(0)

    def create_run(self, experiment_id: str, *, name: str | None = None, tags: Mapping[str, str] | None = None) -> str:
        assert self.go.acquire(timeout=60)
        return super().create_run(experiment_id, name=name, tags=tags)


def test_elsewhere_each_spare_is_ready_once_made(experiment_name: str) -> None:
    inner = _OneAtATime()
    tracker = QueuedTracker(inner, on_error=print)
    assert not tracker.runs_in_bulk
    pool = RunPool(tracker, tracker.experiment(experiment_name), TAGS, size=2, limit=2, recorded=set(), on_error=print)
    inner.go.release()
    _ready(pool, 1)  # while the second is still being made
    inner.go.release()
    _ready(pool, 2)
    pool.close()
    tracker.close()


class _Gated(MlflowTracker):
    """A real tracker whose `create_run(s)` waits for `go` once it has `entered` (a slow store)."""

    def __init__(self, tracking: TrackingConfig, fail: bool = False) -> None:
        super().__init__(tracking)
        self.entered, self.go, self.fail = threading.Event(), threading.Event(), fail

    def create_runs(
        self, experiment_id: str, n: int, *, name: str | None = None, tags: Mapping[str, str] | None = None
    ) -> list[str]:
        self.entered.set()
        assert self.go.wait(60)
        if self.fail:
            raise TrackingError("the store refused")
        return super().create_runs(experiment_id, n, name=name, tags=tags)


def _take_in_thread(pool: RunPool) -> tuple[threading.Thread, list[str | None]]:
    got: list[str | None] = []
    thread = threading.Thread(target=lambda: got.append(pool.take()))
    thread.start()
    return thread, got


def test_take_waits_for_the_spare_being_made_rather_than_returning_none(
    tracking: TrackingConfig, experiment_name: str
) -> None:
    tracker = _Gated(tracking)
    experiment = tracker.experiment(experiment_name)
    pool = RunPool(tracker, experiment, TAGS, size=1, limit=1, recorded=set(), on_error=print)
    assert tracker.entered.wait(60)
    thread, got = _take_in_thread(pool)
    thread.join(0.3)
    assert thread.is_alive() and not got, "take returned while a spare was being made"
    tracker.go.set()
    thread.join(60)
    pool.close()
    assert got and got[0] is not None
    assert tracker.find_runs(experiment, {**TAGS, SPARE_TAG: "true"}) == [got[0]]


def test_take_returns_none_when_the_spare_being_made_fails(tracking: TrackingConfig, experiment_name: str) -> None:
    tracker = _Gated(tracking, fail=True)
    experiment = tracker.experiment(experiment_name)
    errors: list[str] = []
    pool = RunPool(tracker, experiment, TAGS, size=1, limit=1, recorded=set(), on_error=errors.append)
    assert tracker.entered.wait(60)
    thread, got = _take_in_thread(pool)
    tracker.go.set()
    thread.join(60)
    pool.close()
    assert got == [None] and "the store refused" in errors[0]
