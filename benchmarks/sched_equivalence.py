"""Check that the scheduling pass decides exactly as it does at another git revision.

    python benchmarks/sched_equivalence.py [--against main] [--random 500] [--seed 0] [--sim-days 1]

A rewrite of `compute.scheduler.schedule` for speed must not change one decision. This tool runs
the same inputs through this tree's pass and through the pass of `--against` (checked out with
`git worktree add --detach` in a temporary folder, run in a subprocess with that tree's `compute`
imported) and compares every decision: the starts (job, node, GPUs, gang members, borrowed) and
preemptions in the order the pass made them, and every waiting entry (kind, place, arguments).

The inputs, all built by this file (so both revisions see the same ones):
- the scheduling-pass cases of benchmarks/compute_bench.py, with the bound on attempts stopped per
  pass and without it (`preempt_max_victims=0`);
- `--random` random states, small enough that rules collide: cordoned and quarantined nodes,
  excluded nodes, stopping attempts, running and pending gangs, projects with and without lend and
  borrow, unknown projects, borrowed-only and non-preemptible jobs and attempts, checkpoints,
  aging, tight bounds on the preemption search and on attempts stopped per pass, both reclaim
  orders; a quarter of them without projects;
- every pass of `--sim-days` simulated days of benchmarks/fleet_sim.py's workload (projects,
  reclaim by checkpoint), whose states follow from the decisions before.

Prints one line per group and the first differing cases; exits 1 when any decision differs.
"""

from __future__ import annotations

import argparse
import pickle
import random
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
Case = tuple[str, tuple[Any, ...], dict[str, Any]]
"""(name, positional arguments of `schedule`, keyword arguments)."""


def _decision(d: Any) -> tuple[Any, ...]:
    """A decision as plain, picklable values (the records' classes may differ between revisions)."""
    starts = [(p.job_id, p.node, p.gpus, p.members, p.borrowed) for p in d.start]
    stops = [(s.job_id, s.attempt, s.node, s.for_job, s.reclaim_for) for s in d.preempt]
    waiting = {j: (kind.value, place, args) for j, (kind, place, args) in d.waiting.items()}
    return starts, stops, waiting


def bench_cases() -> Iterator[Case]:
    """The passes benchmarks/compute_bench.py measures, bounded and unbounded."""
    import compute_bench
    from compute import SchedulerConfig

    for name, kw in compute_bench.PASS_CASES:
        for config in (SchedulerConfig(), SchedulerConfig(preempt_max_victims=0)):
            pending, running, nodes, now, projects = compute_bench.pass_inputs(**kw)
            yield f"bench {name} (bound {config.preempt_max_victims})", (pending, running, nodes, now, config), \
                {"projects": projects}


def random_case(seed: int) -> Case:
    """One random state (see the module doc)."""
    from compute import NodeView, PendingJob, ProjectView, RunningAttempt, SchedulerConfig, VictimOrder

    rng = random.Random(seed)
    now = 1_000_000.0
    nodes = []
    for i in range(rng.randint(1, 24)):
        size = rng.choice([1, 2, 4, 4, 8, 8])
        state = rng.random()
        schedulable = state > 0.12
        unavailable = "" if schedulable else rng.choice(["cordoned", "quarantined", ""])
        nodes.append(NodeView(f"n{i:02d}", tuple(range(size)), schedulable, unavailable))
    with_projects = rng.random() < 0.75
    names = [f"p{i}" for i in range(rng.choice([1, 1, 2, 3, 6]))] if with_projects else ["default"]
    job_projects = names + (["stray"] if with_projects and rng.random() < 0.3 else [])
    projects = [
        ProjectView(n, rng.randint(0, 3 * len(nodes)), rng.choice([0.5, 1.0, 1.0, 2.0, 3.0]),
                    borrow=rng.random() < 0.8, lend=rng.random() < 0.7, usage=rng.choice([0.0, rng.uniform(0, 5e4)]))
        for n in names
    ] if with_projects else []

    levels = rng.sample(range(100), 3)
    palette = [0, 100, *levels, *(q + 1 for q in levels)]  # few levels and their neighbours: ties and off-by-ones

    def priority() -> int:
        return rng.choice(palette)

    running = []
    fill = rng.random()
    for node in nodes:
        free = list(node.gpus)
        rng.shuffle(free)
        while free and rng.random() < fill:
            take = min(len(free), rng.choice([1, 1, 2, 4]))
            held, free = tuple(sorted(free[:take])), free[take:]
            running.append(RunningAttempt(
                f"r{len(running)}", rng.randint(1, 3), node.name, held, priority(), rng.random() < 0.75,
                now - rng.choice([1.0, 5.0, rng.uniform(0, 7200)]), stopping=rng.random() < 0.1,
                project=rng.choice(job_projects), borrowed_only=rng.random() < 0.15,
                checkpoint_at=rng.choice([None, now - rng.uniform(0, 3600)])))
    singles = [i for i, a in enumerate(running) if not a.stopping]
    for g in range(rng.randint(0, 3)):  # running gangs: one job id and attempt on several nodes
        members = rng.sample(singles, min(len(singles), rng.randint(2, 3)))
        if len(members) < 2 or len({running[i].node for i in members}) < len(members):
            continue
        first = running[members[0]]
        for i in members:
            singles.remove(i)
            a = running[i]
            running[i] = RunningAttempt(
                f"gang{g}", 1, a.node, a.gpus, first.priority, first.preemptible, first.started_at,
                project=first.project, borrowed_only=first.borrowed_only, checkpoint_at=first.checkpoint_at)
    node_names = [n.name for n in nodes]
    pending = []
    for k in range(rng.randint(0, rng.choice([40, 300]))):
        gang = rng.random() < 0.1
        excluded = frozenset(rng.sample(node_names, rng.randint(1, max(1, len(node_names) // 2)))) \
            if rng.random() < 0.1 else frozenset()
        pending.append(PendingJob(
            f"j{k}", priority(), rng.choice([0, 1, 1, 1, 1, 2, 2, 3, 4, 4, 8, 8, 16]) if not gang else rng.choice([1, 2, 4]),
            rng.randint(0, 10_000), now - rng.choice([0.0, rng.uniform(0, 10_000)]), excluded,
            nodes=rng.randint(2, 4) if gang else 1, project=rng.choice(job_projects),
            preemptible=rng.random() < 0.85, borrowed_only=rng.random() < 0.1))
    config = SchedulerConfig(
        min_runtime_s=rng.choice([0.0, 10.0, 600.0]), aging_s=rng.choice([60.0, 600.0]),
        aging_cap=rng.choice([0, 25]), preempt_candidates=rng.choice([1, 2, 8]),
        preempt_scan=rng.choice([2, 8, 256]), preempt_max_victims=rng.choice([0, 2, 512, 512]),
        usage_half_life_s=rng.choice([600.0, 3600.0]), reclaim_order=rng.choice(list(VictimOrder)))
    return f"random seed {seed}", (pending, running, nodes, now, config), {"projects": projects}


def sim_passes(days: int) -> Iterator[tuple[str, Any]]:
    """(name, decision) of every pass of benchmarks/fleet_sim.py's workload over `days` days."""
    import fleet_sim
    import compute.testing.fleet as fleet
    from compute import SchedulerConfig

    real = fleet.schedule
    out: list[tuple[str, Any]] = []

    def recording(*args: Any, **kw: Any) -> Any:
        decision = real(*args, **kw)
        out.append((f"fleet_sim pass {len(out)} at t={args[3]:.0f}", decision))
        return decision

    fleet.schedule = recording
    try:
        jobs = fleet_sim.week(days, 1)
        fleet_sim.run("projects", jobs, fleet_sim.NODES, fleet_sim.PROJECTS, SchedulerConfig(min_runtime_s=60.0),
                      days * fleet_sim.DAY, 60.0)
    finally:
        fleet.schedule = real
    yield from out


def dump(path: Path, tree: Path, randoms: int, seed: int, sim_days: int) -> None:
    """Run every case with the `compute` of `tree`; pickle {group: [(name, decision)]} to `path`."""
    sys.path[:0] = [str(tree), str(Path(__file__).resolve().parent)]
    import compute
    from compute import schedule

    if not Path(compute.__file__).resolve().is_relative_to(tree.resolve()):
        sys.exit(f"imported {compute.__file__}, not the compute of {tree}")
    groups: dict[str, list[tuple[str, Any]]] = {"benchmark cases": [], "random states": [], "fleet_sim passes": []}
    for name, args, kw in bench_cases():
        groups["benchmark cases"].append((name, _decision(schedule(*args, **kw))))
    for s in range(seed, seed + randoms):
        name, args, kw = random_case(s)
        groups["random states"].append((name, _decision(schedule(*args, **kw))))
    groups["fleet_sim passes"] = [(name, _decision(d)) for name, d in sim_passes(sim_days)]
    path.write_bytes(pickle.dumps(groups))


def _run_dump(tree: Path, out: Path, args: argparse.Namespace) -> None:
    cmd = [sys.executable, __file__, "--dump", str(out), "--tree", str(tree),
           "--random", str(args.random), "--seed", str(args.seed), "--sim-days", str(args.sim_days)]
    subprocess.run(cmd, check=True)


def compare(against: str, args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="sched-eq-") as tmp:
        base = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base), against], check=True)
        try:
            _run_dump(base, Path(tmp) / "base.pickle", args)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=True)
        _run_dump(ROOT, Path(tmp) / "ours.pickle", args)
        theirs = pickle.loads((Path(tmp) / "base.pickle").read_bytes())
        ours = pickle.loads((Path(tmp) / "ours.pickle").read_bytes())
    failed = 0
    for group, cases in ours.items():
        differ = [name for (name, d), (_, e) in zip(cases, theirs[group]) if d != e]
        if len(cases) != len(theirs[group]):
            differ.append(f"{len(cases)} cases here, {len(theirs[group])} at {against}")
        print(f"{group}: {len(cases)} cases, {len(differ)} differ from {against}"
              + (": " + "; ".join(differ[:5]) if differ else ""))
        failed += len(differ)
    return 1 if failed else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="main", help="The git revision to compare with (default main).")
    parser.add_argument("--random", type=int, default=500, help="How many random states (default 500).")
    parser.add_argument("--seed", type=int, default=0, help="The first random state's seed.")
    parser.add_argument("--sim-days", type=int, default=1, help="Simulated days of fleet_sim passes (default 1).")
    parser.add_argument("--dump", type=Path, help=argparse.SUPPRESS)  # internal: one revision's decisions
    parser.add_argument("--tree", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump:
        dump(args.dump, args.tree, args.random, args.seed, args.sim_days)
        return
    sys.exit(compare(args.against, args))


if __name__ == "__main__":
    main()
