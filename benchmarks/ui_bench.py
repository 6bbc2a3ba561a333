"""How fast the dashboard answers with 10k jobs and a 1k-trial campaign; prints one table.

    python benchmarks/ui_bench.py [--jobs 10000] [--trials 1000] [--runs 7]

Builds a temporary home: `--jobs` jobs submitted through `compute.Client` (`sleep`, 1 GPU each),
a daemon with 4 GPU slots (so 4 run and the rest wait, with the waiting reasons its scheduling
pass writes), and one campaign whose Optuna ledger holds `--trials` complete trials. Then starts
the real `autoresearch ui` in a subprocess (its start-up time: process start to "serving", beside
`autoresearch jobs list --json`, a fast CLI command, as a ratio), and fetches each page `--runs`
times over HTTP. Each page's median is printed beside its baseline: the same data read and dumped
as JSON in process, the way the equivalent `--json` CLI command reads it (no interpreter start-up
in the baseline), as a ratio. Target (issue 22): every page under 300 ms; start-up under 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from compute import Client, DaemonConfig, JobSpec, Resources, start_daemon, stop_daemon  # noqa: E402
from tests.autoresearch.ui.server import ui_server  # noqa: E402

CLI = [sys.executable, "-c", "from autoresearch.cli import main; main()"]
TARGET_MS = 300.0
CAMPAIGN = "bench-1k"


def fill_jobs(client: Client, n: int) -> None:
    for i in range(n):
        client.submit(JobSpec(name=f"bench-{i}", argv=["sleep", "3600"], resources=Resources(gpus=1),
                              labels={"bench": "ui"}, priority=i % 100))  # fmt: skip
        if i % 1000 == 999:
            print(f"  {i + 1} jobs", file=sys.stderr)


def fill_campaign(home: Path, trials: int) -> None:
    import optuna

    from autoresearch.campaign import Ledger, Proposal
    from autoresearch.testing._checks import score, suite_campaign

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    campaign = suite_campaign(home, CAMPAIGN, budget={"max_trials": max(trials, 1), "max_parallel": 4})
    ledger = Ledger.open(campaign, home=home, cache=True)
    for i in range(trials):
        params = {"x": (i % 37) / 10.0 - 1.0, "y": i % 7, "kind": "abc"[i % 3]}
        ledger.admit(Proposal(params=params))
        ledger.mark_launched(i, f"job-{i:010d}")
        ledger.complete(i, score(params), gpu_seconds=60.0)
        if i % 100 == 99:
            print(f"  {i + 1} trials", file=sys.stderr)
    ledger.set_state(type(ledger.state).completed, "benchmark ledger")


def median_ms(call: Callable[[], object], runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    from autoresearch import api

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        print(f"filling {args.jobs} jobs and {args.trials} trials ...", file=sys.stderr)
        with Client(home, autostart=False) as client:
            fill_jobs(client, args.jobs)
        fill_campaign(home, args.trials)
        start_daemon(home, DaemonConfig(gpus=4, tick_s=0.5))
        env = {**os.environ, "AUTORESEARCH_HOME": str(home), "PYTHONPATH": str(ROOT)}
        try:
            with Client(home, autostart=False) as client:
                deadline = time.monotonic() + 120
                while not client.queue(1)[0].waiting_reason and time.monotonic() < deadline:
                    time.sleep(0.2)
                job_id = client.queue(1)[0].id
                def jobs(**query: object) -> Callable[[], object]:
                    return lambda: json.dumps([j.model_dump(mode="json") for j in client.list(**query)])  # type: ignore[arg-type]

                deep = {"states": ["pending"], "limit": 50, "offset": 7450}
                cases: list[tuple[str, str, Callable[[], object]]] = [
                    ("/fleet", "compute nodes --json", lambda: json.dumps([n.model_dump(mode="json") for n in client.node_status()])),
                    ("/queue", "jobs list --state pending --json", jobs(states=["pending"], limit=50)),
                    ("/queue?page=150", "(same, offset 7450)", jobs(**deep)),
                    ("/jobs", "jobs list --json", jobs(limit=50)),
                    ("/jobs?page=150&state=pending", "(same, offset 7450)", jobs(**deep)),
                    (f"/jobs/{job_id}", "jobs status ID --json", lambda: client.get(job_id).model_dump_json()),
                    ("/campaigns", "status --json", lambda: json.dumps([c.model_dump(mode="json") for c in api.campaigns(home=home)])),
                    (f"/campaigns/{CAMPAIGN}", "status NAME --json", lambda: api.status(CAMPAIGN, home=home).model_dump_json()),
                    (f"/campaigns/{CAMPAIGN}?page=20", "(same)", lambda: api.status(CAMPAIGN, home=home).model_dump_json()),
                ]  # fmt: skip
                t0 = time.perf_counter()
                with ui_server(home) as url:
                    started_s = time.perf_counter() - t0
                    cli_s = min(_wall(CLI + ["jobs", "list", "--json"], env) for _ in range(3))
                    rows = []
                    with httpx.Client(base_url=url, timeout=60) as web:
                        for path, baseline, call in cases:
                            assert web.get(path).status_code == 200, path  # warm (first campaign page imports)
                            page_ms, page_max = median_ms(partial(web.get, path), args.runs)
                            base_ms, _ = median_ms(call, args.runs)
                            rows.append((path, page_ms, page_max, baseline, base_ms))
        finally:
            stop_daemon(home, stop_jobs=True, wait_s=120)

    print(f"\n{args.jobs} jobs ({args.jobs - 4} pending), {args.trials} trials; median of {args.runs} runs; "
          f"target < {TARGET_MS:.0f} ms per page\n")  # fmt: skip
    print(f"| page | median ms | max ms | baseline (in-process read + JSON of) | baseline ms | ratio | < {TARGET_MS:.0f} ms |")
    print("| --- | ---: | ---: | --- | ---: | ---: | --- |")
    for path, page_ms, page_max, baseline, base_ms in rows:
        ok = "yes" if page_ms < TARGET_MS else "NO"
        print(f"| `{path}` | {page_ms:.1f} | {page_max:.1f} | `{baseline}` | {base_ms:.1f} | {page_ms / base_ms:.2f} | {ok} |")
    print(f"\nstart-up of `autoresearch ui` (process start to serving): {started_s:.2f} s; "
          f"`autoresearch jobs list --json` (whole process): {cli_s:.2f} s; ratio {started_s / cli_s:.2f}")


def _wall(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
