"""Turning Results into Markdown tables (printed and saved), results.json and PNG plots."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from evals.metrics import (
    PairedTest,
    paired_wilcoxon,
    regret_at,
    regret_within_steps,
    spread,
    time_curve,
    time_to_target,
    utilization,
)
from evals.latency import PeerRow
from evals.records import Arm, FaultKind, RunRecord
from evals.run import Results
from evals.tasks import curve, minimum

def fmt(x: float) -> str:
    if math.isinf(x):
        return "never"
    x = x + 0.0  # no "-0"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def cell(values: Sequence[float]) -> str:
    s = spread(values)
    return f"{fmt(s.median)} [{fmt(s.q25)}, {fmt(s.q75)}]"


def test_cell(test: PairedTest) -> str:
    return f"{fmt(test.median_diff)} (p={test.p_value:.2g}, {test.wins}W/{test.losses}L)"


def baseline(results: Results, run: RunRecord, trials: int) -> RunRecord | None:
    """The plain-TPE run a run is paired with (same task and seed): plain TPE running the same jobs
    with the same slots for a parallel stack run, else in-process sequential plain TPE."""
    def find(arm: Arm, slots: int) -> RunRecord | None:
        return next((r for r in results.runs if r.arm is arm and r.task == run.task and r.seed == run.seed
                     and r.slots == slots and r.target_regret is None and len(r.trials) >= trials), None)  # fmt: skip

    if run.arm in (Arm.stack_optuna, Arm.stack_llm) and run.slots > 1:
        return find(Arm.plain_tpe_jobs, run.slots)
    return find(Arm.plain_tpe, 1)


def quality_table(results: Results) -> list[str]:
    groups: dict[tuple, list[RunRecord]] = defaultdict(list)
    for r in results.runs:
        if r.part in ("quality", "stack", "llm"):
            groups[(r.task, r.part, r.arm.value, r.slots)].append(r)
    if not groups:
        return []
    checks = results.suite.checkpoints
    lines = [
        "### Simple regret by trials (median [IQR] over seeds)", "",
        "Paired test (last column): Wilcoxon signed-rank, two-sided, seed by seed, at the largest checkpoint the "
        "run reached, against plain TPE: for a stack arm with k > 1 slots, plain TPE running the same jobs from "
        "k threads (plain-tpe-jobs); otherwise in-process sequential plain TPE. Shown: median of (arm - "
        "baseline), p, W/L = seeds where the arm is lower/higher.",
        "",
        "| task | part | arm | slots | seeds | " + " | ".join(f"regret@{c}" for c in checks) + " | paired test |",
        "|" + " --- |" * (6 + len(checks)),
    ]  # fmt: skip
    for (task, part, arm, slots), runs in sorted(groups.items()):
        trials = min(len(r.trials) for r in runs)
        cells = [cell([regret_at(curve(r), c) for r in runs]) if c <= trials else "" for c in checks]
        at = max((c for c in checks if c <= trials), default=trials)
        pairs = [(r, b) for r in runs if (b := baseline(results, r, at)) is not None]
        versus = ""
        if arm != Arm.plain_tpe.value and pairs:
            mine = [regret_at(curve(r), at) for r, _ in pairs]
            test = paired_wilcoxon(mine, [regret_at(curve(b), at) for _, b in pairs])
            versus = f"vs {pairs[0][1].arm.value}: @{at}: {test_cell(test)}"
        lines.append(f"| {task} | {part} | {arm} | {slots} | {len(runs)} | " + " | ".join(cells) + f" | {versus} |")
    return lines + [""]


def wallclock_table(results: Results) -> list[str]:
    runs = [r for r in results.runs if r.part == "wallclock"]
    if not runs:
        return []
    lines = [
        "### Time to a target regret, 1 vs 4 slots (same jobs: 5 steps x "
        f"{results.suite.wallclock_step_s} s)", "",
        "Seconds from the first proposal until a trial at or below the target regret ended; `never` counts as "
        "infinite in the median. Utilization: training-step time / (slots x wall); busy: job-process time / "
        "(slots x wall).", "",
        "| task (target) | arm | slots | reached | time to target | trials run | useful util. | busy util. |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]  # fmt: skip
    groups: dict[tuple, list[RunRecord]] = defaultdict(list)
    for r in runs:
        groups[(r.task, r.target_regret, r.arm.value, r.slots)].append(r)
    ttt = {k: [_ttt(r) for r in v] for k, v in groups.items()}
    for key, group in sorted(groups.items()):
        task, target, arm, slots = key
        reached = sum(t is not None for t in ttt[key])
        times = [t if t is not None else math.inf for t in ttt[key]]
        useful = [utilization(r.useful_s, r.slots, r.wall_s) for r in group if r.useful_s is not None]
        busy = [utilization(r.busy_s, r.slots, r.wall_s) for r in group if r.busy_s is not None]
        lines.append(
            f"| {task} ({target}) | {arm} | {slots} | {reached}/{len(group)} | {cell(times)} s | "
            f"{cell([len(r.trials) for r in group])} | {cell(useful) if useful else ''} | "
            f"{cell(busy) if busy else ''} |"
        )
    lines.append("")
    for (task, target, arm, slots), group in sorted(groups.items()):
        if slots != 4 or (task, target, arm, 1) not in groups:
            continue
        one = {r.seed: _ttt(r) for r in groups[(task, target, arm, 1)]}
        ratios = [t / base for r in group if (t := _ttt(r)) is not None and (base := one.get(r.seed))]
        if ratios:
            lines.append(
                f"- {task}, {arm}: 4-slot / 1-slot time to target, median of paired ratios "
                f"{statistics.median(ratios):.2f}x over {len(ratios)} seed(s) that reached it both ways"
            )
    return lines + [""]


def _ttt(run: RunRecord) -> float | None:
    return time_to_target(time_curve(run.ends, run.values, minimum(run.task)), run.target_regret or 0.0)


def pruning_table(results: Results) -> list[str]:
    runs = [r for r in results.runs if r.part == "pruning"]
    if not runs:
        return []
    lines = [
        "### Pruning at small budgets (median pruner vs none, 4 slots, 10 steps per trial)", "",
        "Regret of the best complete trial within a compute budget of B full trials (B x 10 training steps, "
        "summed over all trials in the order they ended). Gain = regret without pruning - with (positive: "
        "pruning helps), paired by seed.", "",
        "| task | budget (trials) | no pruning | median pruner | gain (paired) | pruned trials |",
        "| --- | --- | --- | --- | --- | --- |",
    ]  # fmt: skip
    tasks = sorted({r.task for r in runs})
    for task in tasks:
        none = {r.seed: r for r in runs if r.task == task and r.pruner == "none"}
        median = {r.seed: r for r in runs if r.task == task and r.pruner == "median"}
        seeds = sorted(set(none) & set(median))
        pruned = [sum(t.state == "pruned" for t in median[s].trials) for s in seeds]
        for budget in results.suite.pruning_budgets:
            a = [_within(none[s], budget) for s in seeds]
            b = [_within(median[s], budget) for s in seeds]
            finite = [(x, y) for x, y in zip(a, b) if math.isfinite(x) and math.isfinite(y)]
            gain = ""
            if finite:
                test = paired_wilcoxon([y for _, y in finite], [x for x, _ in finite])
                gain = f"{fmt(-test.median_diff)} (p={test.p_value:.2g}, pruning lower in {test.wins}/{test.n})"
            lines.append(f"| {task} | {budget} | {cell(a)} | {cell(b)} | {gain} | {cell(pruned)} |")
    return lines + [""]


def _within(run: RunRecord, budget_trials: int) -> float:
    steps = [t.steps for t in run.trials]
    return regret_within_steps(steps, run.values, run.ends, minimum(run.task), budget_trials * 10)


def robustness_table(results: Results) -> list[str]:
    if not results.robustness:
        return []
    lines = [
        f"### Robustness ({results.suite.robustness_trials} trials, 4 slots per campaign)", "",
        "Ended correctly: completed, no trial left running, no lost or duplicate result (every succeeded job's "
        "last printed value is its trial's value), reported best = best complete trial, at most one trial over "
        "budget.", "",
        "| fault | ended correctly | trials hit by the fault | first problem |",
        "| --- | --- | --- | --- |",
    ]  # fmt: skip
    for fault in FaultKind:
        cases = [c for c in results.robustness if c.fault is fault]
        if not cases:
            continue
        ok = sum(c.ok for c in cases)
        problem = " ".join(next((c.problems[0] for c in cases if c.problems), "").split())[:240].replace("|", "/")
        hit = sum(c.faulted for c in cases)
        lines.append(f"| {fault.value} | {ok}/{len(cases)} | {hit} of {sum(c.trials for c in cases)} | {problem} |")
    return lines + [""]


def latency_table(results: Results) -> list[str]:
    lat = results.latency
    if lat is None:
        return []
    worst = max(lat.preemption_beyond_grace_s)
    return [
        "### Compute latency", "",
        "| metric | measured | baseline |", "| --- | --- | --- |",
        f"| launch p50 (submit -> first instruction, {lat.launches} launches) | {lat.launch_p50_s * 1000:.1f} ms | "
        f"Popen {lat.popen_p50_s * 1000:.1f} ms |",
        f"| launch p95 | {lat.launch_p95_s * 1000:.1f} ms | |",
        f"| preemption: high job start beyond the victim's grace (max of {len(lat.preemption_beyond_grace_s)}) | "
        f"{worst * 1000:.1f} ms | |",
        "",
        *peers_table(lat.peers),
    ]  # fmt: skip


def peers_table(rows: list[PeerRow]) -> list[str]:
    """The campaign benchmark's rows: the stack beside a plain Optuna loop and Ray Tune."""
    if not rows:
        return []
    ours = rows[0].wall_s
    lines = [f"### Per-trial overhead beside peers (Hartmann6, {rows[0].trials} trials, seed 0, same jobs)", "",
             "| arm | wall clock | x ours | simple regret | overhead per trial | refill gap |",
             "| --- | --- | --- | --- | --- | --- |"]  # fmt: skip
    for r in rows:
        lines.append(f"| {r.arm} | {r.wall_s:.1f} s | {r.wall_s / ours:.2f}x | {r.regret:.4f} | "
                     f"{r.per_trial_overhead_ms:.0f} ms | {r.refill_gap_ms:.0f} ms |")  # fmt: skip
    return lines + [""]


def digits_table(results: Results) -> list[str]:
    runs = [r for r in results.runs if r.part == "digits"]
    if not runs:
        return []
    lines = ["### Digits MLP (real training, 4 slots)", "", "| arm | seeds | trials | best val error | wall |",
             "| --- | --- | --- | --- | --- |"]  # fmt: skip
    for arm in sorted({r.arm.value for r in runs}):
        group = [r for r in runs if r.arm.value == arm]
        best = [min((v for v in r.values if v is not None), default=math.inf) for r in group]
        walls = cell([r.wall_s for r in group])
        lines.append(f"| {arm} | {len(group)} | {len(group[0].trials)} | {cell(best)} | {walls} s |")
    return lines + [""]


def markdown(results: Results) -> str:
    s = results.suite
    head = [
        f"## autoresearch evals: `{s.name}` suite",
        "",
        f"Suite **{s.name}**{' (few seeds: indicative numbers, not claims)' if s.name == 'quick' else ''}; "
        f"parts: {', '.join(p.value for p in results.parts)}; LLM arm: {results.llm}; "
        f"{results.wall_s:.0f} s on {results.machine.get('cpus')} CPUs "
        f"(load {results.machine.get('load_1min_at_start')} at start), optuna {results.machine.get('optuna')}; started {results.started}.",
        f"Command: `{results.command}`",
        "",
    ]  # fmt: skip
    body = [
        *quality_table(results), *wallclock_table(results), *pruning_table(results), *robustness_table(results),
        *latency_table(results), *digits_table(results),
    ]  # fmt: skip
    notes = [f"- {n}" for n in results.notes]
    return "\n".join(head + body + (["Notes:", *notes, ""] if notes else []))


def save_json(results: Results, out: Path) -> Path:
    """results.json under `out`, replaced atomically (a kill mid-write leaves the previous one)."""
    out.mkdir(parents=True, exist_ok=True)
    path, tmp = out / "results.json", out / "results.json.tmp"
    tmp.write_text(results.model_dump_json(indent=1))
    tmp.replace(path)
    return path


def load(out: Path) -> Results:
    """The results.json of an earlier run saved under `out`."""
    return Results.model_validate_json((out / "results.json").read_text())


def save(results: Results, out: Path) -> list[Path]:
    """results.json, summary.md and the PNG plots under `out`; the paths written."""
    from evals.plots import plot_regret_by_trials, plot_regret_by_time

    written = [save_json(results, out), out / "summary.md"]
    written[1].write_text(markdown(results))
    for plot in (plot_regret_by_trials, plot_regret_by_time):
        path = plot(results, out)
        if path is not None:
            written.append(path)
    return written
