"""Where our stack's per-trial time goes, read from `campaign_bench.py --profile FILE`.

    python benchmarks/campaign_profile.py FILE --trials 100

cProfile sees the runner's thread only (the one that drives the graph); the MLflow writer
thread and the compute daemon (another process) are not in it. The rows are cumulative times
of the functions on the runner's path, in milliseconds per trial, nested as they call each
other (a child's time is inside its parent's); `graph bookkeeping` is the LangGraph loop's time
outside the four nodes (checkpoints, channel updates). cProfile slows Python-heavy code, so
read the shares, not the absolute numbers.
"""

from __future__ import annotations

import argparse
import pstats
from pathlib import Path

POINTS: tuple[tuple[int, str, str, str], ...] = (
    (0, "autoresearch/runner/run.py", "_drive", "graph loop (all rounds)"),
    (1, "autoresearch/runner/nodes.py", "propose", "propose node"),
    (2, "autoresearch/policy/optuna_policy.py", "propose", "Optuna ask + suggest (TPE over the RDB study)"),
    (3, "optuna/storages/_cached_storage.py", "get_all_trials", "RDB trial reads for the sampler"),
    (2, "autoresearch/campaign/ledger/optuna_ledger.py", "admit", "ledger admit (trial attrs written)"),
    (1, "autoresearch/runner/nodes.py", "launch", "launch node"),
    (2, "autoresearch/runner/launch.py", "_create_run", "MLflow create_run (synchronous)"),
    (2, "autoresearch/campaign/ledger/optuna_ledger.py", "set_mlflow_run", "ledger set_mlflow_run"),
    (2, "compute/client.py", "submit", "compute submit"),
    (2, "autoresearch/campaign/ledger/optuna_ledger.py", "mark_launched", "ledger mark_launched"),
    (1, "autoresearch/runner/nodes.py", "evaluate", "evaluate node"),
    (2, "compute/client.py", "wait_for_change", "waiting for a job to change"),
    (2, "autoresearch/runner/evaluate.py", "_finish", "finishing ended trials"),
    (3, "autoresearch/campaign/ledger/optuna_ledger.py", "complete", "ledger complete (Optuna state + values)"),
    (3, "tracking/sources.py", "read", "metrics read (MLflow get_run, log parse)"),
    (1, "autoresearch/runner/nodes.py", "replan", "replan node"),
    (0, "autoresearch/campaign/ledger/optuna_ledger.py", "open", "ledger open (once per campaign)"),
)
"""(depth, file suffix, function, label) of the rows, in print order."""
NODES = ("propose", "launch", "evaluate", "replan")


def cumulative_s(stats: pstats.Stats, suffix: str, function: str) -> float:
    """Cumulative seconds of every profiled function `function` in a file ending with `suffix`."""
    table = stats.stats  # type: ignore[attr-defined]
    return sum(v[3] for (path, _, name), v in table.items() if name == function and path.endswith(suffix))


def rows(path: Path, trials: int) -> list[tuple[int, str, str, float]]:
    """(depth, `file:function`, label, ms per trial) per point, then the graph's own bookkeeping."""
    stats = pstats.Stats(str(path))
    out = [(depth, f"{suffix}:{function}", label, cumulative_s(stats, suffix, function) / trials * 1000)
           for depth, suffix, function, label in POINTS]  # fmt: skip
    nodes = sum(cumulative_s(stats, "autoresearch/runner/nodes.py", n) for n in NODES)
    loop = cumulative_s(stats, "autoresearch/runner/run.py", "_drive")
    bookkeeping = (1, "langgraph/pregel", "graph bookkeeping (loop minus nodes)", (loop - nodes) / trials * 1000)
    out.insert(len(POINTS) - 1, bookkeeping)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--trials", type=int, required=True, help="trials the profiled runs ran, all seeds together")
    args = parser.parse_args()
    for depth, where, label, ms in rows(args.profile, args.trials):
        print(f"{'  ' * depth}{ms:8.1f} ms  {label}  ({where})")


if __name__ == "__main__":
    main()
