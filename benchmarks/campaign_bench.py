"""The 100-trial Hartmann6 campaign through the full stack, beside a plain Optuna loop and Ray Tune.

    python benchmarks/campaign_bench.py [--trials 100] [--seeds 3] [--parallel 4]
        [--peers optuna,ray-tune] [--step-seconds 0.1] [--warmup 8] [--json] [--profile FILE]

Arms (same seeds, same pinned TPE, same subprocess jobs printing metrics):

- `autoresearch`: `autoresearch.runner.run_campaign` on examples/synthetic/hartmann6.yaml (TPE,
  multivariate + constant liar, seeded; pruner none so every arm runs every trial to its end):
  the LangGraph graph on its SQLite checkpointer, the Optuna RDB ledger, one MLflow run per
  trial (a local SQLite store), the compute daemon running each trial as a subprocess, and the
  job's printed `objective:` lines parsed from its log into MLflow.
- `optuna`: a plain in-memory Optuna loop, `--parallel` worker threads (benchmarks/campaign_peers.py).
- `ray-tune`: Ray Tune with `OptunaSearch` and `max_concurrent_trials=--parallel`, a function
  trainable running the same job (benchmarks/campaign_peers.py).

`--peers` picks the peer arms (default `optuna`: the full stack beside the plain loop, as
before). Every arm starts warm (daemon up, MLflow schema made, Ray started, and, with
`--warmup N` (default 8), one unmeasured N-trial campaign run through each arm first, so no
measured run pays the process's first imports) and is timed from the first proposal to the last
result. The arms take turns going first (ours first on even seeds, last on odd ones). `--step-seconds` makes each job longer (the default job
is 20 steps of 0.02 s, a stress test of per-trial overhead; 0.1 gives 2 s jobs).

Our arm's wall clock stops when `run_campaign` returns: every verdict is in the ledger, and the
MLflow writes still pending are left to a detached writer (tracking/outbox.py). `+ MLflow drain`
goes on until that writer has applied the last one (the peers write no MLflow: the same number);
each arm starts only after the drain, so the writer never slows the next arm.

Per arm, medians over seeds: wall clock, its ratio to ours, simple regret (best - (-3.32237)),
per-trial overhead and refill gap. Per-trial overhead = (wall clock - ideal makespan) / trials,
where the ideal makespan list-schedules the arm's own measured job durations (spawn -> end
noticed), in start order, on `--parallel` slots with no time between jobs. Refill gap = the
median time from a job's end to the start of the job that takes its slot (for our stack split
into the runner's part, end -> next submit, and the daemon's, submit -> start). Exact
definitions: benchmarks/campaign_timing.py. With two or more seeds, a paired two-sided Wilcoxon
test on regret, ours vs each peer. `--json` prints `{"rows": [...], "per_seed": [...],
"tests": [...], "settings": {...}}` and nothing else on stdout (progress goes to stderr).
`--profile FILE` runs our arm under cProfile (the runner's thread) and writes pstats to FILE.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import optuna  # noqa: E402

from autoresearch.campaign import Campaign, CampaignPaths, load_campaign  # noqa: E402
from autoresearch.runner import RunnerSettings, run_campaign  # noqa: E402
from benchmarks.campaign_peers import ArmRun, RaySession, optuna_loop, ray_tune  # noqa: E402
from benchmarks.campaign_timing import Span, overhead_ms, paired_test, refill_gaps  # noqa: E402
from compute import Client, DaemonConfig, start_daemon, stop_daemon  # noqa: E402
from examples.synthetic.functions import regret  # noqa: E402
from tracking import CAMPAIGN_LABEL, mlflow_client, resolve_tracking, wait_drained, writer_pid  # noqa: E402

CONFIG = ROOT / "examples" / "synthetic" / "hartmann6.yaml"
OURS = "autoresearch"
PEERS = ("optuna", "ray-tune")
WARMUP_SEED = 1000
"""The seed of the warm-up campaign (`--warmup`), apart from the measured seeds 0 .. N-1."""
Progress = Callable[[str], None]


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


def full_stack(campaign: Campaign, home: Path, settings: RunnerSettings, profiler: cProfile.Profile | None = None
               ) -> ArmRun:  # fmt: skip
    began, started = time.time(), time.monotonic()
    if profiler is not None:
        profiler.enable()
    try:
        outcome = run_campaign(campaign, home=home, settings=settings)
    finally:
        if profiler is not None:
            profiler.disable()
    wall = time.monotonic() - started
    outbox = CampaignPaths.of(campaign.name, home).tracking_outbox
    left = wait_drained(outbox)
    assert left == 0, f"{left} MLflow writes were not applied (see {outbox}.log)"
    while writer_pid(outbox) is not None:  # the next arm starts once the writer has exited
        time.sleep(0.02)
    drained = time.monotonic() - started
    best = outcome.status.best_trial
    assert best is not None and best.value is not None, outcome.reason
    done = sum(t.state.value == "complete" for t in outcome.status.trials)
    with Client(home, autostart=False) as client:
        jobs = client.list(labels={CAMPAIGN_LABEL: campaign.name}, limit=10 * campaign.budget.max_trials)
    spans = tuple(Span(a.started_at, a.ended_at, job.created_at) for job in jobs for a in job.attempts
                  if a.ended_at is not None)  # fmt: skip
    return ArmRun(OURS, campaign.policy.seed or 0, wall, best.value, done, spans, drained, began)


def run_seeds(home: Path, peers: Sequence[str], seeds: Sequence[int], trials: int, parallel: int,
              step_seconds: float | None = None, settings: RunnerSettings | None = None,
              progress: Progress = lambda line: None, profiler: cProfile.Profile | None = None,
              warmup: int = 0) -> list[ArmRun]:  # fmt: skip
    """Every arm for every seed, on the compute daemon already serving `home` (its MLflow store is
    `home/mlflow.db`); starts and stops one Ray instance when `ray-tune` is among `peers`.

    `warmup` > 0: each arm first runs a campaign of that many trials that is not measured, so no
    measured run pays this process's first imports (our arm imports LangGraph, MLflow's client
    and the runner's modules when it first needs them; the plain loop would inherit them). The
    arms then take turns going first: ours first on even seeds, last on odd ones."""
    unknown = sorted(set(peers) - set(PEERS))
    if unknown:
        raise ValueError(f"--peers: unknown arm(s) {unknown}; choose from {', '.join(PEERS)}")
    settings = settings or RunnerSettings()
    runs: list[ArmRun] = []

    def run(arm: str, campaign: Campaign, seed: int, measured: bool = True) -> ArmRun:
        if arm == OURS:
            return full_stack(campaign, home, settings, profiler if measured else None)
        if arm == "optuna":
            return optuna_loop(campaign, seed)
        return ray_tune(campaign, seed, home / "ray-results")

    with RaySession(parallel) if "ray-tune" in peers else nullcontext():
        if warmup > 0:
            warm = campaign_for(WARMUP_SEED, warmup, parallel, home, step_seconds)
            for arm in (OURS, *peers):
                run(arm, warm, WARMUP_SEED, measured=False)
            progress(f"warm-up: {warmup} trials through each arm (not measured)")
        for turn, seed in enumerate(seeds):
            campaign = campaign_for(seed, trials, parallel, home, step_seconds)
            for arm in (OURS, *peers) if turn % 2 == 0 else (*peers, OURS):
                runs.append(run(arm, campaign, seed))
            progress(f"seed {seed}: " + json.dumps(per_seed_rows([r for r in runs if r.seed == seed], parallel)))
    return runs


def per_seed_rows(runs: Sequence[ArmRun], parallel: int) -> list[dict[str, Any]]:
    rows = []
    for run in runs:
        gaps = refill_gaps(run.spans, parallel)
        drained = run.drained_s if run.drained_s is not None else run.wall_s
        rows.append({"arm": run.arm, "seed": run.seed, "wall_s": run.wall_s, "wall_drained_s": drained,
                     "regret": regret("hartmann6", run.best),
                     "per_trial_overhead_ms": overhead_ms(run.wall_s, run.spans, parallel),
                     "refill_gap_ms": gaps.gap_ms, "refill_runner_ms": gaps.runner_ms,
                     "refill_daemon_ms": gaps.daemon_ms, "completed": run.completed,
                     "jobs": len(run.spans), **_ends(run)})  # fmt: skip
    return rows


def _ends(run: ArmRun) -> dict[str, float | None]:
    """Seconds from the arm's start to its first job's spawn, and from its last job's end to its return."""
    if run.began_at is None or not run.spans:
        return {"first_job_s": None, "after_last_job_s": None}
    first, last = min(s.start for s in run.spans), max(s.end for s in run.spans)
    return {"first_job_s": first - run.began_at, "after_last_job_s": run.began_at + run.wall_s - last}


def summary(runs: Sequence[ArmRun], parallel: int, settings: dict[str, Any]) -> dict[str, Any]:
    """The `--json` document: medians per arm (`rows`), `per_seed` values, paired `tests`."""
    per_seed = per_seed_rows(runs, parallel)
    arms = [OURS, *(arm for arm in dict.fromkeys(r["arm"] for r in per_seed) if arm != OURS)]  # ours first

    def med(arm: str, key: str) -> float | None:
        values = [r[key] for r in per_seed if r["arm"] == arm and r[key] is not None]
        return statistics.median(values) if values else None

    ours_wall, ours_drained = med(OURS, "wall_s"), med(OURS, "wall_drained_s")
    rows = [{"arm": arm, "wall_s": med(arm, "wall_s"), "wall_drained_s": med(arm, "wall_drained_s"),
             "regret": med(arm, "regret"),
             "per_trial_overhead_ms": med(arm, "per_trial_overhead_ms"), "refill_gap_ms": med(arm, "refill_gap_ms"),
             "refill_runner_ms": med(arm, "refill_runner_ms"), "refill_daemon_ms": med(arm, "refill_daemon_ms"),
             "first_job_s": med(arm, "first_job_s"), "after_last_job_s": med(arm, "after_last_job_s"),
             "ratio_to_ours": _ratio(med(arm, "wall_s"), ours_wall),
             "drained_ratio_to_ours": _ratio(med(arm, "wall_drained_s"), ours_drained),
             "seeds": sum(r["arm"] == arm for r in per_seed),
             "completed": min(r["completed"] for r in per_seed if r["arm"] == arm)} for arm in arms]  # fmt: skip
    ours = {r["seed"]: r["regret"] for r in per_seed if r["arm"] == OURS}
    tests = []
    for arm in arms[1:]:
        theirs = {r["seed"]: r["regret"] for r in per_seed if r["arm"] == arm}
        seeds = sorted(ours.keys() & theirs.keys())
        tests.append({"ours": OURS, "peer": arm, **paired_test([ours[s] for s in seeds], [theirs[s] for s in seeds])})
    return {"rows": rows, "per_seed": per_seed, "tests": tests, "settings": settings}


def _ratio(value: float | None, ours: float | None) -> float | None:
    return value / ours if value is not None and ours else None


def table(doc: dict[str, Any]) -> str:
    s = doc["settings"]
    steps = f"{s['step_seconds']} s" if s["step_seconds"] is not None else "0.02 s (job default)"
    lines = [f"Hartmann6, {s['trials']} trials, {s['parallel']} in parallel, TPE, {s['seeds']} seed(s), "
             f"20 steps x {steps}; load average {s['load_start']} at start, {s['load_end']} at end",
             f"{'arm':14}{'wall clock (s)':>16}{'x ours':>9}{'+ MLflow drain (s)':>20}{'x ours':>9}"
             f"{'simple regret':>15}{'overhead/trial':>16}{'refill gap':>12}{'  (runner + daemon)':<22}"
             f"{'to 1st job':>11}{'after last':>11}"]  # fmt: skip
    for r in doc["rows"]:
        split = ""
        if r["refill_runner_ms"] is not None:
            split = f"  ({r['refill_runner_ms']:.0f} + {r['refill_daemon_ms']:.0f} ms)"
        ends = "".join(f"{r[k]:>10.2f}s" if r.get(k) is not None else f"{'':>11}" for k in ("first_job_s", "after_last_job_s"))
        lines.append(f"{r['arm']:14}{r['wall_s']:>16.1f}{r['ratio_to_ours']:>8.2f}x{r['wall_drained_s']:>20.1f}"
                     f"{r['drained_ratio_to_ours']:>8.2f}x{r['regret']:>15.4f}"
                     f"{r['per_trial_overhead_ms']:>13.0f} ms{r['refill_gap_ms']:>9.0f} ms{split:<22}{ends}")  # fmt: skip
    for t in doc["tests"]:
        p = f"p = {t['p_value']:.3f}" if t["p_value"] is not None else "p n/a"
        lines.append(f"regret, {OURS} vs {t['peer']} (paired, {t['seeds']} seeds): {t['wins']}W/{t['losses']}L/"
                     f"{t['ties']}T, median difference {t['median_diff']:+.4f}, {p} (two-sided Wilcoxon)")  # fmt: skip
    for r in doc["rows"][1:]:
        lines.append(f"ratio (median wall clock, {OURS} / {r['arm']}): {1 / r['ratio_to_ours']:.2f}x until the "
                     f"campaign returned, {1 / r['drained_ratio_to_ours']:.2f}x until its last MLflow write")  # fmt: skip
    return "\n".join(lines)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0 .. N-1")
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--poll", type=float, default=1.0, help="runner poll_s (metric reads of running trials)")
    parser.add_argument("--step-seconds", type=float, default=None,
                        help="override the job's sleep per step (job.py default 0.02 s x 20 steps)")
    parser.add_argument("--peers", default="optuna",
                        help="comma-separated peer arms: optuna, ray-tune (default optuna)")  # fmt: skip
    parser.add_argument("--warmup", type=int, default=8,
                        help="trials of an unmeasured campaign each arm runs first (default 8; 0: none)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON only")
    parser.add_argument("--profile", type=Path, default=None, help="write a cProfile of our arm's runner to this file")
    args = parser.parse_args(argv)
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    if sorted(set(peers) - set(PEERS)):
        parser.error(f"--peers: unknown arm(s) {sorted(set(peers) - set(PEERS))}; choose from {', '.join(PEERS)}")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    out = sys.stderr if args.json else sys.stdout
    progress: Progress = lambda line: print(line, file=out, flush=True)  # noqa: E731
    profiler = cProfile.Profile() if args.profile else None

    load_start = _load()
    with tempfile.TemporaryDirectory(prefix="ar-campaign-bench-") as tmp:
        home = Path(tmp)
        start_daemon(home, DaemonConfig(gpus=args.parallel))
        mlflow_client(resolve_tracking(str(home / "mlflow.db"))).search_experiments()  # schema, once
        try:
            runs = run_seeds(home, peers, range(args.seeds), args.trials, args.parallel, args.step_seconds,
                             RunnerSettings(poll_s=args.poll), progress, profiler, args.warmup)  # fmt: skip
        finally:
            stop_daemon(home, stop_jobs=True)
    if profiler is not None:
        profiler.dump_stats(str(args.profile))
    settings = {"trials": args.trials, "seeds": args.seeds, "parallel": args.parallel, "warmup": args.warmup,
                "step_seconds": args.step_seconds, "poll_s": args.poll, "peers": peers, "load_start": load_start,
                "load_end": _load(), "cpus": os.cpu_count(), "optuna": optuna.__version__}  # fmt: skip
    if "ray-tune" in peers:
        import ray

        settings["ray"] = ray.__version__
    doc = summary(runs, args.parallel, settings)
    print(json.dumps(doc, indent=1) if args.json else "\n" + table(doc))


if __name__ == "__main__":
    main()
