"""Where our stack's per-trial time goes, read from `campaign_bench.py --profile FILE` (cProfile)
or from a py-spy recording of it.

    python benchmarks/campaign_profile.py FILE --trials 100
    py-spy record --rate 500 --format raw --threads -o spy.txt -- \
        python benchmarks/campaign_bench.py --trials 100 --seeds 1 --peers ""
    python benchmarks/campaign_profile.py spy.txt --trials 100 --spy-rate 500

Only the runner's thread counts (the one that drives the graph); the MLflow writer thread, the
spare-run thread and the compute daemon (another process) are not in it. The rows are cumulative
times of the functions on the runner's path, in milliseconds per trial, nested as they call each
other (a child's time is inside its parent's); `graph bookkeeping` is the LangGraph loop's time
outside the four steps (checkpoints, channel updates, the wait for the checkpoint thread).
cProfile slows Python-heavy code several times (LangGraph, SQLAlchemy): read its shares, not
its numbers. py-spy samples without slowing the code much; by default it counts time on the
CPU only, so a wait for a job or for a lock shows as ~0 (add `--idle` to count it).
"""

from __future__ import annotations

import argparse
import pstats
import re
from pathlib import Path

POINTS: tuple[tuple[int, str, str, str], ...] = (
    (0, "autoresearch/runner/run.py", "_drive", "graph loop (all rounds)"),
    (1, "autoresearch/runner/nodes.py", "propose", "propose step"),
    (2, "autoresearch/policy/optuna_policy.py", "propose", "Optuna ask + suggest (TPE over the mirrored study)"),
    (2, "autoresearch/campaign/ledger/optuna_ledger.py", "admit", "ledger admit (trial attrs written)"),
    (2, "autoresearch/runner/nodes.py", "_look", "the policy's view (trials, budget)"),
    (1, "autoresearch/runner/nodes.py", "launch", "launch step"),
    (2, "autoresearch/runner/launch.py", "_create_run", "the trial's MLflow run (a spare, named by a queued write)"),
    (2, "autoresearch/campaign/ledger/optuna_ledger.py", "set_mlflow_run", "ledger set_mlflow_run"),
    (2, "autoresearch/runner/launch.py", "_spec", "the job's spec"),
    (2, "compute/client.py", "submit", "compute submit"),
    (2, "autoresearch/campaign/ledger/optuna_ledger.py", "mark_launched", "ledger mark_launched"),
    (1, "autoresearch/runner/nodes.py", "evaluate", "evaluate step"),
    (2, "compute/client.py", "wait_for_change", "waiting for a job to change"),
    (2, "compute/client.py", "get", "reading jobs"),
    (2, "autoresearch/runner/evaluate.py", "_finish", "finishing ended trials"),
    (3, "autoresearch/campaign/ledger/optuna_ledger.py", "complete", "ledger complete (Optuna state + values)"),
    (3, "tracking/sources.py", "MetricReader.read", "metrics read (log parse, queued MLflow writes)"),
    (1, "autoresearch/runner/nodes.py", "replan", "replan step"),
    (0, "autoresearch/campaign/ledger/optuna_ledger.py", "Ledger.open", "ledger open (once per campaign)"),
)
"""(depth, file suffix, function, label) of the rows, in print order."""
NODES = ("propose", "launch", "evaluate", "replan")


Cumulative = dict[tuple[str, str], float]
"""(file, function) -> cumulative seconds on the runner's thread."""
_FRAME = re.compile(r"^(?P<function>.*) \((?P<file>.*?):\d+\)$")


def from_cprofile(path: Path) -> Cumulative:
    table = pstats.Stats(str(path)).stats  # type: ignore[attr-defined]
    out: Cumulative = {}
    for (file, _, function), v in table.items():
        out[(file, function)] = out.get((file, function), 0.0) + v[3]
    return out


def from_pyspy(path: Path, rate: float) -> Cumulative:
    """A `py-spy record --format raw --threads` file: per function, the samples of the main
    thread's stacks under `run_campaign` that hold it (once per stack), at `rate` samples a second."""
    out: Cumulative = {}
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if "MainThread" not in frames[0] or not any(f.startswith("run_campaign ") for f in frames):
            continue
        held = {(m["file"], m["function"]) for f in frames[1:] if (m := _FRAME.match(f))}
        for key in held:
            out[key] = out.get(key, 0.0) + int(count) / rate
    return out


def cumulative_s(table: Cumulative, suffix: str, function: str) -> float:
    """Cumulative seconds of every function `function` in a file ending with `suffix`."""
    return sum(v for (path, name), v in table.items()
               if path.endswith(suffix) and _same(name, function))  # fmt: skip


def _same(name: str, function: str) -> bool:
    """py-spy names a method `Class.method` and cProfile `method`: a point names it either way."""
    return name == function or name.endswith(f".{function}") or function.endswith(f".{name}")


def rows(table: Cumulative, trials: int) -> list[tuple[int, str, str, float]]:
    """(depth, `file:function`, label, ms per trial) per point, then the graph's own bookkeeping."""
    out = [(depth, f"{suffix}:{function}", label, cumulative_s(table, suffix, function) / trials * 1000)
           for depth, suffix, function, label in POINTS]  # fmt: skip
    nodes = sum(cumulative_s(table, "autoresearch/runner/nodes.py", n) for n in NODES)
    loop = cumulative_s(table, "autoresearch/runner/run.py", "_drive")
    bookkeeping = (1, "langgraph/pregel", "graph bookkeeping (loop minus nodes)", (loop - nodes) / trials * 1000)
    out.insert(len(POINTS) - 1, bookkeeping)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile", type=Path)
    parser.add_argument("--trials", type=int, required=True, help="trials the profiled runs ran, all seeds together")
    parser.add_argument("--spy-rate", type=float, default=None,
                        help="FILE is a py-spy raw recording made at this many samples a second")  # fmt: skip
    args = parser.parse_args()
    table = from_pyspy(args.profile, args.spy_rate) if args.spy_rate else from_cprofile(args.profile)
    for depth, where, label, ms in rows(table, args.trials):
        print(f"{'  ' * depth}{ms:8.1f} ms  {label}  ({where})")


if __name__ == "__main__":
    main()
