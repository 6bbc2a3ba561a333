"""How long the CLI takes per call, as an agent pays it; prints one table.

    python benchmarks/cli_bench.py [--runs N]

Starts a compute daemon on a temporary home, then runs each command N times (default 7) in a
fresh process, exactly as a shell would (`python -c "from autoresearch.cli import main; main()"
ARGS`), and prints each command's median wall time beside a bare `python -c pass` as a ratio.
Targets (on an idle 2-core machine, daemon up): every command that reads (a row marked read)
<= 0.15 s, `jobs submit` <= 0.2 s.

`--trials N` (default 500) also makes a campaign whose ledger holds N complete trials and times
`status NAME [--json]` and `status --json` on it, beside the read `autoresearch status` made
before it read the ledger file itself (`campaign_status(Ledger.load(NAME))` through Optuna's
storage, in a fresh process: the "old status path" row).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from compute import Client, DaemonConfig, JobSpec, start_daemon, stop_daemon  # noqa: E402

CLI = [sys.executable, "-c", "from autoresearch.cli import main; main()"]
WRITES = {"jobs submit -- true": 0.2, "jobs submit --dry-run": 0.2, "jobs priority ID high": None,
          "compute up (running)": None, "jobs cancel ID": None}
"""Rows that change something, with their target (None: none); every other row reads: <= 0.15 s."""
READ_TARGET = 0.15
OLD_STATUS = ("import sys; from autoresearch.campaign import Ledger, campaign_status; "
              "print(campaign_status(Ledger.load(sys.argv[1])).model_dump_json())")
"""What `autoresearch status NAME --json` read before it read the ledger file itself (Optuna's storage)."""


def wall_s(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process: user + system, which load from others inflates less)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def medians(commands: dict[str, list[str]], env: dict[str, str], runs: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) time per command; rounds go over every command in turn, so that load from
    other processes on the machine hits all of them (and the baseline) alike."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            times[name].append(wall_s(argv, env))
    return {name: (statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts))
            for name, ts in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--trials", type=int, default=500, help="Trials in the campaign `status` reads (0: none).")
    args = parser.parse_args()
    runs = args.runs
    with tempfile.TemporaryDirectory(prefix="cli-bench-") as tmp:
        home = Path(tmp) / "home"
        # as an installed CLI runs: from cached bytecode (with PYTHONDONTWRITEBYTECODE set, every run
        # would compile each edited module again, ~40 ms for `status`)
        env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
               "AUTORESEARCH_HOME": str(home), "PYTHONPATH": str(ROOT)}
        start_daemon(home, DaemonConfig(gpus=4, tick_s=0.2))
        try:
            with Client(home, autostart=False) as client:
                done = client.submit(JobSpec(argv=["sh", "-c", "echo hello"], resources={"gpus": 1}))
                client.wait(done.id, timeout=60)
                sleeper = client.submit(JobSpec(argv=["sleep", "600"]))
            commands = {
                "--help": ["--help"],
                "jobs submit -- true": ["jobs", "submit", "--", "true"],
                "jobs submit --dry-run": ["jobs", "submit", "--dry-run", "--", "python", "train.py"],
                "jobs status ID --json": ["jobs", "status", done.id, "--json"],
                "jobs status ID": ["jobs", "status", done.id],
                "jobs list --json": ["jobs", "list", "--json"],
                "jobs list": ["jobs", "list"],
                "jobs logs ID": ["jobs", "logs", done.id],
                "jobs logs ID --json": ["jobs", "logs", done.id, "--json"],
                "jobs wait ID": ["jobs", "wait", done.id],
                "jobs --help": ["jobs", "--help"],
                "jobs priority ID high": ["jobs", "priority", sleeper.id, "high"],
                "compute up (running)": ["compute", "up"],
                "compute status --json": ["compute", "status", "--json"],
                "compute status": ["compute", "status"],
                "compute nodes --json": ["compute", "nodes", "--json"],
                "compute nodes": ["compute", "nodes"],
                "compute projects --json": ["compute", "projects", "--json"],
                "skills list": ["skills", "list"],
                "skills list --json": ["skills", "list", "--json"],
                "config schema": ["config", "schema"],
            }
            if args.trials:
                from benchmarks.ui_bench import fill_campaign

                fill_campaign(home, args.trials, "bench-status")
                commands |= {"status NAME --json": ["status", "bench-status", "--json"],
                             "status NAME": ["status", "bench-status"], "status --json": ["status", "--json"],
                             "status": ["status"]}
            argvs = {"python -c pass": [sys.executable, "-c", "pass"]} | {n: CLI + a for n, a in commands.items()}
            if args.trials:
                argvs["(old status path) NAME --json"] = [sys.executable, "-c", OLD_STATUS, "bench-status"]
            times = medians(argvs, env, runs)
            times["jobs cancel ID"] = medians({"cancel": CLI + ["jobs", "cancel", sleeper.id]}, env, 1)["cancel"]
            bare = times.pop("python -c pass")
            rows = list(times.items())
        finally:
            stop_daemon(home, stop_jobs=True, wait_s=60)
    print(f"runs per command: {runs}; bare `python -c pass`: {bare[0] * 1000:.0f} ms ({bare[1] * 1000:.0f} ms CPU); "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print("| command | median | vs python -c pass | CPU | target |")
    print("| --- | --- | --- | --- | --- |")
    for name, (wall, cpu) in rows:
        goal = WRITES.get(name) if name in WRITES or name.startswith("(") else READ_TARGET
        target = "" if goal is None else f"<= {goal:.2f} s{'' if name in WRITES else ' (read)'}"
        shown = name if name.startswith("(") else f"autoresearch {name}"
        print(f"| {shown} | {wall * 1000:.0f} ms | {wall / bare[0]:.1f}x | {cpu * 1000:.0f} ms | {target} |")


if __name__ == "__main__":
    main()
