"""Wall time of the runner's functions per trial: `campaign_bench.py` with `perf_counter` timers.

    python benchmarks/campaign_timers.py --trials 100 --seeds 2 --peers ""

Takes `campaign_bench.py`'s arguments, runs it, then prints (stderr) the milliseconds per trial
spent in each timed function on the runner's thread (calls from other threads are not timed),
and `langgraph` = the graph loop minus its four steps. Unlike cProfile it slows nothing but the
timed calls (~1 us each), and unlike py-spy's default it counts waits (for a job, a lock, a
commit, LangGraph's checkpoint thread) as the time they take. Nested rows are inside their
parents (`policy.propose` is inside `step.propose`).
"""

from __future__ import annotations

import collections
import functools
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import autoresearch.campaign.ledger.optuna_ledger as ledger  # noqa: E402
import autoresearch.policy.optuna_policy as optuna_policy  # noqa: E402
import autoresearch.runner.evaluate as evaluate  # noqa: E402
import autoresearch.runner.gated as gated  # noqa: E402
import autoresearch.runner.launch as launch  # noqa: E402
import autoresearch.runner.run as run  # noqa: E402
import compute.client as client  # noqa: E402
import tracking.queued as queued  # noqa: E402
import tracking.sources as sources  # noqa: E402

SPENT: collections.Counter[str] = collections.Counter()
CALLS: collections.Counter[str] = collections.Counter()
STEPS = ("propose", "launch", "evaluate", "replan")
TIMED: tuple[tuple[Any, str, str], ...] = (
    (run, "_drive", "graph loop"),
    *((gated.SteeredNodes, step, f"step.{step}") for step in STEPS),
    (optuna_policy.OptunaPolicy, "propose", "policy.propose (TPE)"),
    (ledger.Ledger, "admit", "ledger.admit"),
    (launch.Launcher, "_create_run", "launch._create_run"),
    (ledger.Ledger, "set_mlflow_run", "ledger.set_mlflow_run"),
    (launch.Launcher, "_spec", "launch._spec"),
    (client.Client, "submit", "client.submit"),
    (ledger.Ledger, "mark_launched", "ledger.mark_launched"),
    (client.Client, "wait_for_change", "client.wait_for_change (idle)"),
    (client.Client, "get", "client.get"),
    (evaluate.Evaluator, "_finish", "evaluate._finish"),
    (sources.MetricReader, "read", "metrics.read"),
    (ledger.Ledger, "complete", "ledger.complete"),
    (ledger.Ledger, "open", "once: Ledger.open"),
    (launch.Launcher, "__init__", "once: Launcher()"),
    (evaluate.Evaluator, "reconcile", "once: Evaluator.reconcile"),
    (queued.QueuedTracker, "create_run", "create_run, synchronous (no spare ready)"),
    (queued.QueuedTracker, "close", "once: QueuedTracker.close"),
)
"""(owner, attribute, label): what is timed."""


def _timed(function: Any, label: str) -> Any:
    main = threading.main_thread()

    @functools.wraps(function)
    def timed(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not main:
            return function(*args, **kwargs)
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            SPENT[label] += time.perf_counter() - started
            CALLS[label] += 1

    return timed


def main() -> None:
    for owner, name, label in TIMED:
        setattr(owner, name, _timed(getattr(owner, name), label))
    from benchmarks import campaign_bench  # after the timers: `run_campaign` finds the timed `_drive`

    campaign_bench.main()
    seeds = int(sys.argv[sys.argv.index("--seeds") + 1]) if "--seeds" in sys.argv else 3
    trials = seeds * (int(sys.argv[sys.argv.index("--trials") + 1]) if "--trials" in sys.argv else 100)
    steps = sum(SPENT[f"step.{step}"] for step in STEPS)
    derived = {"langgraph (graph loop minus its steps)": SPENT["graph loop"] - steps,
               "runner busy (graph loop minus the idle wait)": SPENT["graph loop"] - SPENT["client.wait_for_change (idle)"]}  # fmt: skip
    print(f"\nms per trial on the runner's thread ({trials} trials):", file=sys.stderr)
    for _, _, label in TIMED:
        print(f"{SPENT[label] / trials * 1000:9.2f}  {label}  ({CALLS[label]} calls)", file=sys.stderr)
    for label, seconds in derived.items():
        print(f"{seconds / trials * 1000:9.2f}  {label}", file=sys.stderr)


if __name__ == "__main__":
    main()
