"""The 100-trial Hartmann6 campaign through the full stack, beside a plain Optuna loop.

    python benchmarks/campaign_bench.py [--trials 100] [--seeds 3] [--parallel 4]

Full stack: `autoresearch.runner.run_campaign` on examples/synthetic/hartmann6.yaml (TPE,
multivariate + constant liar, seeded; pruner none so both sides run every trial to its
end): the LangGraph graph on its SQLite checkpointer, the Optuna RDB ledger, one MLflow run
per trial (a local SQLite store), the compute daemon running each trial as a subprocess, and
the job's printed `objective:` lines parsed from its log into MLflow.

Plain loop: an in-memory Optuna study with the same sampler and seed; `--parallel` threads
each ask a trial, run the same `job.py` command with `subprocess.run`, parse its last
`objective:` line and tell the value.

Both start warm (daemon up, MLflow schema made) and are timed from the first proposal to the
last result. `--step-seconds` makes each job longer (the default job is 20 steps of 0.02 s, a
stress test of per-trial overhead). Prints wall clock and simple regret (best - (-3.32237)) per seed, the medians,
and the wall-clock ratio (target <= 1.2x, regret no worse).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import optuna  # noqa: E402

from autoresearch.campaign import Campaign, load_campaign  # noqa: E402
from autoresearch.runner import RunnerSettings, run_campaign  # noqa: E402
from compute import DaemonConfig, start_daemon, stop_daemon  # noqa: E402
from examples.synthetic.functions import regret  # noqa: E402
from tracking import mlflow_client, resolve_tracking  # noqa: E402

CONFIG = ROOT / "examples" / "synthetic" / "hartmann6.yaml"


def campaign_for(seed: int, trials: int, parallel: int, home: Path, step_seconds: float | None) -> Campaign:
    base = load_campaign(CONFIG)
    data = base.model_dump(mode="json")
    if step_seconds is not None:
        data["command"] += ["--step-seconds", str(step_seconds)]
    data["name"] = f"hartmann6-bench-{seed}-{uuid.uuid4().hex[:6]}"
    data["budget"].update(max_trials=trials, max_parallel=parallel)
    data["policy"].update(kind="optuna", sampler="tpe", pruner="none", seed=seed)
    data["tracking"]["uri"] = resolve_tracking(str(home / "mlflow.db")).tracking_uri
    return Campaign.model_validate(data, context={"base_dir": CONFIG.parent})


def full_stack(campaign: Campaign, home: Path, settings: RunnerSettings) -> tuple[float, float]:
    started = time.monotonic()
    outcome = run_campaign(campaign, home=home, settings=settings)
    wall = time.monotonic() - started
    best = outcome.status.best_trial
    assert best is not None and best.value is not None, outcome.reason
    done = sum(t.state.value == "complete" for t in outcome.status.trials)
    assert done == campaign.budget.max_trials, f"{done} complete trials of {campaign.budget.max_trials}"
    return wall, regret("hartmann6", best.value)


def plain_loop(campaign: Campaign) -> tuple[float, float]:
    sampler = optuna.samplers.TPESampler(seed=campaign.policy.seed, multivariate=True, constant_liar=True)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    lock = threading.Lock()
    left = [campaign.budget.max_trials]

    def worker() -> None:
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            trial = study.ask()
            params = {name: spec.suggest(trial, name) for name, spec in campaign.search_space.items()}
            argv = campaign.render_command(params, trial.number)
            argv = [sys.executable, *argv[1:]] if argv[0] == "python" else argv
            out = subprocess.run(argv, cwd=campaign.cwd, capture_output=True, text=True, check=True).stdout
            value = float([line for line in out.splitlines() if line.startswith("objective:")][-1].split()[1])
            study.tell(trial, value)

    started = time.monotonic()
    with ThreadPoolExecutor(campaign.budget.max_parallel) as pool:
        for future in [pool.submit(worker) for _ in range(campaign.budget.max_parallel)]:
            future.result()
    return time.monotonic() - started, regret("hartmann6", study.best_value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0 .. N-1")
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--poll", type=float, default=1.0, help="runner poll_s (metric reads of running trials)")
    parser.add_argument("--step-seconds", type=float, default=None,
                        help="override the job's sleep per step (job.py default 0.02 s x 20 steps)")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    rows = []
    with tempfile.TemporaryDirectory(prefix="ar-campaign-bench-") as tmp:
        home = Path(tmp)
        start_daemon(home, DaemonConfig(gpus=args.parallel))
        mlflow_client(resolve_tracking(str(home / "mlflow.db"))).search_experiments()  # schema, once
        settings = RunnerSettings(poll_s=args.poll)
        try:
            for seed in range(args.seeds):
                campaign = campaign_for(seed, args.trials, args.parallel, home, args.step_seconds)
                full = full_stack(campaign, home, settings)
                plain = plain_loop(campaign)
                rows.append((seed, full, plain))
                print(f"seed {seed}: full stack {full[0]:.1f} s regret {full[1]:.4f} | "
                      f"plain loop {plain[0]:.1f} s regret {plain[1]:.4f}", flush=True)  # fmt: skip
        finally:
            stop_daemon(home, stop_jobs=True)

    print()
    steps = f"{args.step_seconds} s" if args.step_seconds is not None else "0.02 s (job default)"
    print(f"Hartmann6, {args.trials} trials, {args.parallel} in parallel, TPE, {args.seeds} seed(s), "
          f"20 steps x {steps}")
    print(f"{'':14}{'wall clock (s)':>16}{'simple regret':>16}")
    full_wall = statistics.median(r[1][0] for r in rows)
    plain_wall = statistics.median(r[2][0] for r in rows)
    print(f"{'full stack':14}{full_wall:>16.1f}{statistics.median(r[1][1] for r in rows):>16.4f}")
    print(f"{'plain optuna':14}{plain_wall:>16.1f}{statistics.median(r[2][1] for r in rows):>16.4f}")
    print(f"ratio (median wall clock, full / plain): {full_wall / plain_wall:.2f}x  (target <= 1.2x)")


if __name__ == "__main__":
    main()
