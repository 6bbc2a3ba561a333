"""Results a researcher can trust, measured: confirmation, hardware provenance and the hidden holdout,
each on beside off, through the full stack.

    python benchmarks/validity_bench.py [--quick] [--parts noise,degraded,holdout] [--seeds 20] [--first-seed 0]
        [--trials 60] [--confirm-top-k 3] [--confirm-seeds 3] [--confirm-when end] [--noise-levels 3e-4,0.025]
        [--degraded-seeds 20] [--holdout-seeds 3] [--json] [--figures DIR] [--load FILE ...]

Every campaign runs as a user's would: `autoresearch.runner.run_campaign` (the LangGraph graph, the
Optuna ledger, MLflow, TPE seeded per seed, pruner none) on a compute daemon whose virtual slots run
each trial as a subprocess (benchmarks/validity_job.py) printing its metric. The truth is known:
every job measures Branin (2-d; min 0.397887) at the trial's parameters, so the *true* regret of a
declared winner is computed from the function at its parameters, never from what it reported:
(branin(x) - min) / range, range = 307.73 (its largest value on the domain, at (-5, 0), less the min).

- noise: the job prints branin(x) + N(0, sigma), sigma = 3e-4 and 0.025 of the range (a fresh draw
  per trial seed). 4 slots, `--trials` per campaign. Off: no `confirm:` section, `--trials` trials.
  On: `confirm: {top_k, seeds, when: end}` with `max_trials = --trials + top_k * seeds` (the same
  exploration, plus the confirmations: the extra trials). The winner is what `autoresearch status`
  declares (the best mean with confirmation).
- degraded: 4 virtual nodes of 1 slot; on local-3 the job's steps take 1/0.75 as long (25% slower).
  The job has a fixed time budget, so there it does fewer steps and ends worse by about `--bias / 4`:
  a biased result. Off: `validity.rerun_suspect: false`, and the winner is the best value whatever
  its hardware (`ranking.best_trial`, what a tool without provenance declares). On: the defaults
  (speed below 0.85 of the other nodes' median: suspect; a suspect that would win is re-run on another
  node), and the winner is the declared one. Counted: how often the winner is a biased result (ran on
  local-3), its true regret, and how many of local-3's trials were flagged suspect.
- holdout: a task built to overfit (parameters x1, x2, z; the validation split rewards z near 0.7
  by `--reward`, the holdout split does not) beside a control task (no such reward), Optuna as the
  policy, `objective.holdout` on the top 5: the Spearman correlation and the overfitting gap that
  `autoresearch status` and the report show (autoresearch.campaign.holdout).

Prints one table per part (medians over seeds, on beside off, and their ratio). `--json` prints
`{"noise": ..., "degraded": ..., "holdout": ..., "settings": ...}` with the per-seed rows and nothing
else on stdout (progress goes to stderr). `--figures DIR` writes PNGs of the per-seed results.
`--load FILE ...` runs nothing: it merges the rows of earlier `--json` outputs (parts or noise levels
run as separate processes) and prints them. `--quick` runs a small version (2 seeds, 12 trials, ...; the test's) unless sizes are given.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import optuna  # noqa: E402

from autoresearch.campaign import Campaign, Ledger, TrialRecord, TrialState, best_trial, campaign_status  # noqa: E402
from autoresearch.report import write_report  # noqa: E402
from autoresearch.runner import RunnerSettings, run_campaign  # noqa: E402
from compute import DaemonConfig, start_daemon, stop_daemon  # noqa: E402
from examples.synthetic.functions import BRANIN, branin  # noqa: E402
from tracking import mlflow_client, resolve_tracking  # noqa: E402

JOB = ROOT / "benchmarks" / "validity_job.py"
BRANIN_RANGE = branin((-5.0, 0.0)) - BRANIN.minimum
"""The objective's range on the search space (its largest value is at the corner (-5, 0))."""
SLOW_NODE = "local-3"
SPACE = {"x1": {"type": "float", "low": -5.0, "high": 10.0}, "x2": {"type": "float", "low": 0.0, "high": 15.0}}
XARGS = ["--x1", "{x1}", "--x2", "{x2}"]
SETTINGS = RunnerSettings(poll_s=0.5, heartbeat_s=2.0, wait_for_tracking=True)
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Sizes:
    """How big each part is."""

    seeds: int
    trials: int
    parallel: int
    top_k: int
    confirm_seeds: int
    confirm_when: str
    noise_levels: tuple[float, ...]
    degraded_seeds: int
    degraded_trials: int
    budget_s: float
    step_s: float
    bias: float
    holdout_seeds: int
    holdout_trials: int
    reward: float
    first_seed: int = 0
    """The noise part's first seed: it runs seeds first_seed .. first_seed + seeds - 1."""


FULL = Sizes(seeds=20, trials=60, parallel=4, top_k=3, confirm_seeds=3, confirm_when="end", noise_levels=(3e-4, 0.025),
             degraded_seeds=20, degraded_trials=24, budget_s=2.0, step_s=0.1, bias=4.0,
             holdout_seeds=3, holdout_trials=30, reward=5.0)  # fmt: skip
QUICK = Sizes(seeds=2, trials=12, parallel=4, top_k=2, confirm_seeds=2, confirm_when="end", noise_levels=(3e-4, 0.025),
              degraded_seeds=1, degraded_trials=10, budget_s=1.0, step_s=0.05, bias=4.0,
              holdout_seeds=1, holdout_trials=10, reward=5.0)  # fmt: skip


def true_regret(params: dict[str, Any]) -> float:
    """The winner's regret from the known function at its parameters, as a fraction of the range."""
    return (branin((params["x1"], params["x2"])) - BRANIN.minimum) / BRANIN_RANGE


def campaign(home: Path, part: str, seed: int, trials: int, parallel: int, command: list[str],
             space: dict[str, Any] = SPACE, **sections: Any) -> Campaign:  # fmt: skip
    """A campaign of `part` on the job, with `sections` of its config over the defaults."""
    data: dict[str, Any] = {
        "name": f"validity-{part}-{seed}-{uuid.uuid4().hex[:6]}",
        "command": [sys.executable, str(JOB), *command],
        "cwd": str(JOB.parent),
        "objective": {"metric": "objective", "mode": "min", "source": "log"},
        "search_space": space,
        "budget": {"max_trials": trials, "max_parallel": parallel},
        "policy": {"kind": "optuna", "sampler": "tpe", "pruner": "none", "seed": seed},
        "tracking": {"uri": resolve_tracking(str(home / "mlflow.db")).tracking_uri},
        **sections,
    }
    return Campaign.model_validate(data, context={"base_dir": JOB.parent})


def run(c: Campaign, home: Path) -> Ledger:
    run_campaign(c, home=home, settings=SETTINGS)
    return Ledger.load(c.name, home)


def used(trials: Sequence[TrialRecord]) -> int:
    return sum(t.state is not TrialState.cancelled for t in trials)


def noise_part(home: Path, s: Sizes, progress: Progress) -> list[dict[str, Any]]:
    rows = []
    extra = s.top_k * s.confirm_seeds
    for level in s.noise_levels:
        command = ["noise", *XARGS, "--sigma", repr(level * BRANIN_RANGE), "--seed", "{seed}"]
        for seed in range(s.first_seed, s.first_seed + s.seeds):
            for arm in ("off", "on"):
                sections = {"confirm": {"top_k": s.top_k, "seeds": s.confirm_seeds, "when": s.confirm_when}} if arm == "on" else {}
                c = campaign(home, f"noise-{arm}", seed, s.trials + (extra if arm == "on" else 0), s.parallel,
                             command, **sections)  # fmt: skip
                status = campaign_status(run(c, home))
                best = status.best_trial
                assert best is not None, f"{c.name}: no winner"
                rows.append({"sigma": level, "seed": seed, "arm": arm, "winner": best.number,
                             "true_regret": true_regret(best.params), "trials": used(status.trials),
                             "confirmations": sum(t.confirms is not None for t in status.trials),
                             "n": best.n, "separable": status.separable})  # fmt: skip
                progress(f"noise sigma={level:g} seed {seed} {arm}: " + json.dumps(rows[-1]))
    return rows


def degraded_part(home: Path, s: Sizes, progress: Progress) -> list[dict[str, Any]]:
    rows = []
    command = ["budget", *XARGS, "--budget-s", repr(s.budget_s), "--step-s", repr(s.step_s), "--bias", repr(s.bias)]
    for seed in range(s.degraded_seeds):
        for arm in ("off", "on"):
            c = campaign(home, f"degraded-{arm}", seed, s.degraded_trials, 4, command, env={"SLOW_NODE": SLOW_NODE},
                         compute={"gpus": 1}, validity={"rerun_suspect": arm == "on"})  # fmt: skip
            ledger = run(c, home)
            trials = ledger.trials()
            status = campaign_status(ledger)
            if arm == "on":
                number = status.best_trial.number if status.best_trial else None
            else:  # blind to provenance: the best value, whatever hardware it came from
                blind = best_trial(trials, c.objective)
                number = blind.number if blind else None
            assert number is not None, f"{c.name}: no winner"
            winner = next(t for t in trials if t.number == number)
            slow = [t for t in status.trials if SLOW_NODE in t.nodes and t.state is TrialState.complete]
            fast = [t for t in status.trials if t.nodes and SLOW_NODE not in t.nodes and t.state is TrialState.complete]
            rows.append({"seed": seed, "arm": arm, "winner": number,
                         "biased": SLOW_NODE in (winner.provenance.nodes if winner.provenance else []),
                         "true_regret": true_regret(winner.params),
                         "value_error": (winner.value or 0.0) - branin((winner.params["x1"], winner.params["x2"])),
                         "slow_trials": len(slow), "slow_flagged": sum(t.suspect for t in slow),
                         "other_flagged": sum(t.suspect for t in fast), "trials": used(trials),
                         "reruns": sum(t.suspect_rerun_of is not None for t in trials)})  # fmt: skip
            progress(f"degraded seed {seed} {arm}: " + json.dumps(rows[-1]))
    return rows


def holdout_part(home: Path, s: Sizes, progress: Progress, report_dir: Path) -> list[dict[str, Any]]:
    rows = []
    space = {**SPACE, "z": {"type": "float", "low": 0.0, "high": 1.0}}
    holdout = {"command": [sys.executable, str(JOB), "holdout", *XARGS, "--z", "{z}"],
               "metric": "holdout_objective", "top_k": 5}  # fmt: skip
    for task, reward in (("overfit", s.reward), ("control", 0.0)):
        for seed in range(s.holdout_seeds):
            command = ["validation", *XARGS, "--z", "{z}", "--reward", repr(reward)]
            c = campaign(home, f"holdout-{task}", seed, s.holdout_trials, s.parallel, command, space,
                         objective={"metric": "objective", "mode": "min", "source": "log", "holdout": holdout})  # fmt: skip
            ledger = run(c, home)
            summary = campaign_status(ledger).holdout
            assert summary is not None, f"{c.name}: no holdout result"
            section = ""
            if seed == 0:  # the report's own words for one campaign of each task
                text = write_report(ledger, report_dir / c.name, home=home).read_text()
                section = text.split("## Holdout", 1)[1].split("\n## ", 1)[0].strip() if "## Holdout" in text else ""
            rows.append({"task": task, "seed": seed, "spearman": summary.spearman, "gap": summary.gap,
                         "evaluated": len(summary.rows), "report_section": section,
                         "pairs": [[r.validation, r.holdout] for r in summary.rows]})  # fmt: skip
            progress(f"holdout {task} seed {seed}: spearman {summary.spearman}, gap {summary.gap}")
    return rows


def _med(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.median(kept) if kept else None


def _q(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summarise(doc: dict[str, Any]) -> dict[str, Any]:
    """Medians per part and arm (`summary`), beside the per-seed rows."""
    out: dict[str, Any] = {}
    noise = doc.get("noise") or []
    for level in dict.fromkeys(r["sigma"] for r in noise):
        arms = {arm: [r for r in noise if r["sigma"] == level and r["arm"] == arm] for arm in ("off", "on")}
        regret = {arm: _med([r["true_regret"] for r in rows]) for arm, rows in arms.items()}
        trials = {arm: statistics.mean(r["trials"] for r in rows) for arm, rows in arms.items()}
        out[f"noise {level:g}"] = {
            "regret_off": regret["off"], "regret_on": regret["on"],
            "regret_ratio": regret["on"] / regret["off"] if regret["off"] else None,
            "trials_off": trials["off"], "trials_on": trials["on"],
            "extra_trials_pct": 100 * (trials["on"] - trials["off"]) / trials["off"],
            "confirmations_on": statistics.mean(r["confirmations"] for r in arms["on"]),
            "separable_on": sum(bool(r["separable"]) for r in arms["on"]),
            "wins_on": sum(on["true_regret"] < off["true_regret"] - 1e-12 for on, off in zip(arms["on"], arms["off"])),
            "losses_on": sum(on["true_regret"] > off["true_regret"] + 1e-12 for on, off in zip(arms["on"], arms["off"])),
            "seeds": len(arms["on"])}  # fmt: skip
    degraded = doc.get("degraded") or []
    if degraded:
        out["degraded"] = {arm: {
            "biased_winners": sum(r["biased"] for r in rows), "seeds": len(rows),
            "regret": _med([r["true_regret"] for r in rows]),
            "value_error": max(abs(r["value_error"]) for r in rows),
            "slow_flagged": sum(r["slow_flagged"] for r in rows), "slow_trials": sum(r["slow_trials"] for r in rows),
            "other_flagged": sum(r["other_flagged"] for r in rows), "trials": statistics.mean(r["trials"] for r in rows),
            "reruns": sum(r["reruns"] for r in rows)}
            for arm in ("off", "on") if (rows := [r for r in degraded if r["arm"] == arm])}  # fmt: skip
    holdout = doc.get("holdout") or []
    if holdout:
        out["holdout"] = {task: {"spearman": _med([r["spearman"] for r in rows]), "gap": _med([r["gap"] for r in rows]),
                                 "seeds": len(rows)}
                          for task in ("overfit", "control") if (rows := [r for r in holdout if r["task"] == task])}  # fmt: skip
    return out


def _f(value: float | None, spec: str) -> str:
    return "n/a" if value is None else format(value, spec)


def table(doc: dict[str, Any]) -> str:
    s, summary = doc["settings"], doc["summary"]
    lines = []
    noise = [(k, v) for k, v in summary.items() if k.startswith("noise ")]
    if noise:
        first = s.get("first_seed", 0)
        lines += [f"noise: Branin + N(0, sigma * range), {s['trials']} trials, {s['parallel']} slots, TPE, "
                  f"{s['seeds']} seeds ({first}-{first + s['seeds'] - 1}); "
                  f"confirm on = top_k {s['top_k']} x seeds {s['confirm_seeds']}, when: {s.get('confirm_when', 'end')}",
                  f"{'sigma / range':>14}{'true regret off':>17}{'on':>11}{'on/off':>8}{'trials off':>12}{'on':>7}"
                  f"{'extra':>8}{'on better/worse':>17}{'separable (on)':>16}"]  # fmt: skip
        for key, r in noise:
            lines.append(f"{key.split()[1]:>14}{_f(r['regret_off'], '.3g'):>17}{_f(r['regret_on'], '.3g'):>11}"
                         f"{_f(r['regret_ratio'], '.2f'):>8}{r['trials_off']:>12.1f}{r['trials_on']:>7.1f}"
                         f"{r['extra_trials_pct']:>7.0f}%{str(r['wins_on']) + ' / ' + str(r['losses_on']):>17}"
                         f"{str(r['separable_on']) + ' of ' + str(r['seeds']):>16}")  # fmt: skip
        lines.append("(true regret: median over seeds of (branin(winner) - min) / range; extra: on's trials over off's)")
    if "degraded" in summary:
        d = summary["degraded"]
        lines += ["", f"degraded: 4 virtual nodes, {SLOW_NODE} 25% slower, fixed time budget {s['budget_s']} s "
                  f"(a biased result ends ~{s['bias'] / 4:g} worse), {s['degraded_trials']} trials, {s['degraded_seeds']} seeds",
                  f"{'provenance':>12}{'biased winners':>16}{'true regret':>13}{'worst |value - truth|':>23}"
                  f"{'slow-node trials flagged':>26}{'others flagged':>16}{'re-runs':>9}{'trials':>8}"]  # fmt: skip
        for arm, r in d.items():
            lines.append(f"{arm:>12}{str(r['biased_winners']) + ' of ' + str(r['seeds']):>16}{_f(r['regret'], '.3g'):>13}"
                         f"{_f(r['value_error'], '.3g'):>23}{str(r['slow_flagged']) + ' of ' + str(r['slow_trials']):>26}"
                         f"{r['other_flagged']:>16}{r['reruns']:>9}{r['trials']:>8.1f}")  # fmt: skip
    if "holdout" in summary:
        lines += ["", f"holdout: validation rewards z near 0.7 by {s['reward']:g} (overfit) or not (control), "
                  f"{s['holdout_trials']} trials, holdout on the top 5, {s['holdout_seeds']} seed(s)",
                  f"{'task':>10}{'Spearman (val vs holdout)':>27}{'overfitting gap':>17}"]  # fmt: skip
        for task, r in summary["holdout"].items():
            lines.append(f"{task:>10}{_f(r['spearman'], '+.3f'):>27}{_f(r['gap'], '+.3g'):>17}")
        for r in doc["holdout"]:
            if r["report_section"]:
                lines += [f"report's Holdout section ({r['task']}, seed {r['seed']}):", *("  " + x for x in
                          r["report_section"].splitlines() if x.strip())]  # fmt: skip
    return "\n".join(lines)


def figures(doc: dict[str, Any], out: Path) -> list[Path]:
    """PNGs of the per-seed results: regret on vs off per noise level, and validation vs holdout."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written = []
    noise = doc.get("noise") or []
    levels = list(dict.fromkeys(r["sigma"] for r in noise))
    if levels:
        fig, axes = plt.subplots(1, len(levels), figsize=(5 * len(levels), 4))
        for ax, level in zip(list(axes) if len(levels) > 1 else [axes], levels):
            data = [[r["true_regret"] for r in noise if r["sigma"] == level and r["arm"] == arm] for arm in ("off", "on")]
            ax.boxplot(data, tick_labels=["confirm off", "confirm on"])
            for i, values in enumerate(data, start=1):
                ax.scatter([i] * len(values), values, s=12, alpha=0.6)
            ax.set_title(f"sigma = {level:g} x range")
            ax.set_ylabel("true regret of the declared winner (/ range)")
        fig.tight_layout()
        written.append(out / "validity-noise-regret.png")
        fig.savefig(written[-1], dpi=100)
        plt.close(fig)
    holdout = [r for r in doc.get("holdout") or [] if r["seed"] == 0]
    if holdout:
        fig, ax = plt.subplots(figsize=(5, 4))
        for r in holdout:
            pairs = [p for p in r["pairs"] if p[1] is not None]
            ax.scatter([p[0] for p in pairs], [p[1] for p in pairs], label=f"{r['task']} (gap {_f(r['gap'], '+.2f')})")
        lo = min(min(p) for r in holdout for p in r["pairs"] if p[1] is not None)
        hi = max(max(p) for r in holdout for p in r["pairs"] if p[1] is not None)
        ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="holdout = validation")
        ax.set_xlabel("validation (what the policy saw)")
        ax.set_ylabel("holdout (hidden)")
        ax.legend()
        fig.tight_layout()
        written.append(out / "validity-holdout.png")
        fig.savefig(written[-1], dpi=100)
        plt.close(fig)
    return written


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a small run (the test's): 2 seeds, 12 trials ...")
    parser.add_argument("--parts", default="noise,degraded,holdout", help="comma-separated: noise, degraded, holdout")
    parser.add_argument("--seeds", type=int, default=None, help="noise: N seeds, from --first-seed (default 20)")
    parser.add_argument("--first-seed", type=int, default=None,
                        help="noise: the first seed (default 0; another set of seeds checks a result on fresh ones)")
    parser.add_argument("--trials", type=int, default=None, help="noise: trials without confirmation (default 60)")
    parser.add_argument("--confirm-top-k", type=int, default=None, help="noise, confirm on: top_k (default 3)")
    parser.add_argument("--confirm-seeds", type=int, default=None, help="noise, confirm on: seeds (default 3)")
    parser.add_argument("--confirm-when", choices=("end", "new_best"), default=None, help="noise, confirm on: when (default end)")
    parser.add_argument("--noise-levels", default=None, help="noise: comma-separated sigmas / range (default 3e-4,0.025)")
    parser.add_argument("--degraded-seeds", type=int, default=None, help="degraded: seeds (default 20)")
    parser.add_argument("--holdout-seeds", type=int, default=None, help="holdout: seeds per task (default 3)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON only")
    parser.add_argument("--load", type=Path, nargs="+", default=None,
                        help="run nothing: merge the rows of these --json outputs (e.g. parts run apart) and print them")
    parser.add_argument("--figures", type=Path, default=None, help="write PNG figures into this folder")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    unknown = sorted(set(parts) - {"noise", "degraded", "holdout"})
    if unknown:
        parser.error(f"--parts: unknown part(s) {unknown}; choose from noise, degraded, holdout")
    base = QUICK if args.quick else FULL
    given = {"seeds": args.seeds, "first_seed": args.first_seed, "trials": args.trials, "top_k": args.confirm_top_k,
             "confirm_seeds": args.confirm_seeds, "confirm_when": args.confirm_when, "degraded_seeds": args.degraded_seeds,
             "holdout_seeds": args.holdout_seeds}  # fmt: skip
    if args.noise_levels is not None:
        given["noise_levels"] = tuple(float(x) for x in args.noise_levels.split(","))
    sizes = Sizes(**{**base.__dict__, **{k: v for k, v in given.items() if v is not None}})
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    out = sys.stderr if args.json else sys.stdout
    progress: Progress = lambda line: print(line, file=out, flush=True)  # noqa: E731
    doc: dict[str, Any] = {"settings": {**sizes.__dict__, "parts": parts, "quick": args.quick, "load_start": _load(),
                                        "cpus": os.cpu_count(), "optuna": optuna.__version__}}  # fmt: skip
    if args.load is not None:
        doc = merged([json.loads(path.read_text()) for path in args.load])
    else:
        doc.update(measure(parts, sizes, progress))
    doc["summary"] = summarise(doc)
    if args.figures is not None:
        doc["figures"] = [str(p) for p in figures(doc, args.figures)]
    print(json.dumps(doc, indent=1) if args.json else "\n" + table(doc))


def merged(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One document from several `--json` outputs: their per-seed rows together, the first one's settings
    (with every noise level and part)."""
    doc: dict[str, Any] = {"settings": dict(docs[0]["settings"])}
    for part in ("noise", "degraded", "holdout"):
        rows = [row for d in docs for row in d.get(part) or []]
        if rows:
            doc[part] = rows
    doc["settings"]["noise_levels"] = sorted({r["sigma"] for r in doc.get("noise", [])})
    doc["settings"]["parts"] = [p for p in ("noise", "degraded", "holdout") if p in doc]
    for key in ("degraded_seeds", "degraded_trials", "budget_s", "bias", "holdout_seeds", "holdout_trials", "reward"):
        doc["settings"][key] = next((d["settings"][key] for d in docs if d["settings"]["parts"] != ["noise"]),
                                    doc["settings"][key])  # fmt: skip
    return doc


def measure(parts: Sequence[str], sizes: Sizes, progress: Progress) -> dict[str, Any]:
    """Run `parts`, each on a daemon of its own; their per-seed rows."""
    doc: dict[str, Any] = {}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ar-validity-bench-") as tmp:
        for part in parts:
            home = Path(tmp) / part
            config = DaemonConfig(virtual_nodes=4, gpus_per_node=1) if part == "degraded" else DaemonConfig(gpus=sizes.parallel)
            start_daemon(home, config)
            mlflow_client(resolve_tracking(str(home / "mlflow.db"))).search_experiments()  # the schema, once
            try:
                if part == "noise":
                    doc["noise"] = noise_part(home, sizes, progress)
                elif part == "degraded":
                    doc["degraded"] = degraded_part(home, sizes, progress)
                else:
                    doc["holdout"] = holdout_part(home, sizes, progress, Path(tmp) / "reports")
            finally:
                stop_daemon(home, stop_jobs=True)
    progress(f"measured in {time.monotonic() - started:.0f} s; load average now {_load()}")
    return doc


if __name__ == "__main__":
    main()
