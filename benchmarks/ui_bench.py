"""How fast the dashboard answers with 10k jobs and a 1k-trial campaign; prints one table.

    python benchmarks/ui_bench.py [--jobs 10000] [--trials 1000] [--runs 7]

Builds a temporary home: `--jobs` jobs submitted through `compute.Client` (`sleep`, 1 GPU each),
a daemon with 4 GPU slots (so 4 run and the rest wait, with the waiting reasons its scheduling
pass writes), one campaign whose Optuna ledger holds `--trials` complete trials (each with a
`STEPS`-point learning curve), and a one-trial campaign. Then, for each page (and each chart the
campaign page fetches after its table: learning curves, parallel coordinates, slice; its filter;
the compare page of three trials):

- **cold**: the first request of a fresh `autoresearch ui` process (nothing imported or read yet);
- **warm**: the median (and max) of `--runs` more requests, 3 s later (`SETTLE_S`: the background
  import of the campaign machinery that the first page starts is done by then);
- beside them a **baseline** read in process and dumped as JSON: for the fleet and job pages the
  read of the equivalent `--json` CLI command; for the campaign pages the **old path**, through
  Optuna's storage (`Ledger.load` + `campaign_status`, what `autoresearch status` does and what the
  page read before it read the ledger's SQLite file itself), each as a ratio.

Two more campaign rows: its **first read** on a server that already imported the campaign
machinery (it served the small campaign first), and the page **right after a ledger write** (a
trial entered, launched and completed by a writer in this process before each request), beside
the old path read after a write, and each chart drawn afresh right after a write (a chart is kept
until its ledger changes, so its warm rows above are the kept one). Start-up: process start to the first 200 answer of `/fleet`
(wall and CPU seconds, beside `autoresearch jobs list --json`, a fast CLI command), and which heavy modules the process
had imported by then (`python -X importtime`). Target: every page under 300 ms; start-up
under 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from compute import Client, DaemonConfig, JobSpec, Resources, start_daemon, stop_daemon  # noqa: E402
from tests.autoresearch.ui.server import free_port  # noqa: E402

CLI = [sys.executable, "-c", "from autoresearch.cli import main; main()"]
TARGET_MS = 300.0
CAMPAIGN = "bench-1k"
SMALL = "bench-small"
SETTLE_S = 3.0
"""Seconds between a server's first request and the next ones: the campaign machinery it imports
in the background once the first page is out (see `autoresearch.ui.app._warm`) is done by then."""


def fill_jobs(client: Client, n: int) -> None:
    for i in range(n):
        client.submit(JobSpec(name=f"bench-{i}", argv=["sleep", "3600"], resources=Resources(gpus=1),
                              labels={"bench": "ui"}, priority=i % 100))  # fmt: skip
        if i % 1000 == 999:
            print(f"  {i + 1} jobs", file=sys.stderr)


def fill_campaign(home: Path, trials: int, name: str = CAMPAIGN) -> Any:
    """A campaign whose ledger holds `trials` complete trials; returns its writer (a `Ledger`)."""
    import optuna

    from autoresearch.campaign import Ledger
    from autoresearch.testing._checks import suite_campaign

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    campaign = suite_campaign(home, name, budget={"max_trials": 10 * max(trials, 1), "max_parallel": 4})
    ledger = Ledger.open(campaign, home=home, cache=True)
    for i in range(trials):
        add_trial(ledger)
        if i % 100 == 99:
            print(f"  {i + 1} trials", file=sys.stderr)
    ledger.set_state(type(ledger.state).completed, "benchmark ledger")
    return ledger


STEPS = 20
"""Points of each trial's learning curve (the synthetic job's default)."""


def add_trial(ledger: Any) -> None:
    """One trial entered, launched, its curve reported and completed (four ledger writes, as the
    runner makes them)."""
    from autoresearch.campaign import Proposal
    from autoresearch.testing._checks import score

    i = len(ledger.trials())
    params = {"x": (i % 37) / 10.0 - 1.0, "y": i % 7, "kind": "abc"[i % 3]}
    number = ledger.admit(Proposal(params=params)).trial_number
    ledger.mark_launched(number, f"job-{number:010d}")
    value = score(params)
    ledger.report_steps(number, {step: value + (STEPS - step) / STEPS for step in range(1, STEPS + 1)})
    ledger.complete(number, value, gpu_seconds=60.0)


def median_ms(call: Callable[[], object], runs: int) -> tuple[float, float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), max(times)


class Server:
    """A real `autoresearch ui` process on a free port (`importtime`: with `python -X importtime`)."""

    def __init__(self, env: dict[str, str], importtime: bool = False) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tempfile.NamedTemporaryFile(prefix="ui-importtime-", suffix=".txt", delete=False)
        flags = ["-X", "importtime"] if importtime else []
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, *flags, *CLI[1:], "ui", "--port", str(self.port)], env=env,
                                     cwd=ROOT, stdout=subprocess.DEVNULL, stderr=self.log)  # fmt: skip

    def first_answer(self, path: str = "/fleet", timeout: float = 60.0) -> tuple[float, float]:
        """(wall seconds from process start to the first 200 answer of `path`, CPU seconds the
        process used by then: on a shared machine the wall time is mostly waiting for a core)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + path, timeout=timeout).status_code == 200:
                    wall = time.perf_counter() - self.t0
                    fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
                    return wall, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except httpx.TransportError:
                time.sleep(0.01)
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"`autoresearch ui` exited {self.proc.returncode}: {Path(self.log.name).read_text()}"
                )
        raise RuntimeError(f"`autoresearch ui` did not answer {path} in {timeout} s")

    def wait_serving(self) -> None:
        """Until the port accepts connections (nothing requested: nothing read or rendered yet)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.01)
        raise RuntimeError("`autoresearch ui` did not start serving in 60 s")

    def imported(self, names: tuple[str, ...]) -> list[str]:
        lines = Path(self.log.name).read_text().splitlines()
        return [n for n in names if any(line.rsplit("|", 1)[-1].strip() == n for line in lines)]

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.unlink(self.log.name)


CHARTS = ("curves", "parallel", "slice")
"""The charts a campaign page fetches after its table."""
HEAVY = ("optuna", "mlflow", "langgraph", "sqlalchemy", "matplotlib")


def timed(call: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    call()
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    from autoresearch.campaign import CampaignPaths, Ledger, campaign_status, known_campaigns, overview

    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        print(f"filling {args.jobs} jobs and {args.trials} trials ...", file=sys.stderr)
        with Client(home, autostart=False) as client:
            fill_jobs(client, args.jobs)
        writer = fill_campaign(home, args.trials)
        fill_campaign(home, 1, SMALL)
        start_daemon(home, DaemonConfig(gpus=4, tick_s=0.5))
        env = {**os.environ, "AUTORESEARCH_HOME": str(home), "PYTHONPATH": str(ROOT)}
        env.pop("AUTORESEARCH_UI_TOKEN", None)
        try:
            with Client(home, autostart=False) as client:
                deadline = time.monotonic() + 120
                while not (client.queue(1) and client.queue(1)[0].waiting_reason) and time.monotonic() < deadline:
                    time.sleep(0.2)
                job_id = client.queue(1)[0].id

                def jobs(**query: object) -> Callable[[], object]:
                    return lambda: json.dumps([j.model_dump(mode="json") for j in client.list(**query)])  # type: ignore[arg-type]

                def old_overview(paths: CampaignPaths) -> Any:
                    ledger = Ledger.load(paths.name, home)
                    return overview(ledger.campaign, campaign_status(ledger), paths).model_dump(mode="json")

                # the old path: through Optuna's storage (what `autoresearch status` read before it read the file too)
                old_status = lambda: campaign_status(Ledger.load(CAMPAIGN, home)).model_dump_json()  # noqa: E731
                old_list = lambda: json.dumps([old_overview(p) for p in known_campaigns(home)])  # noqa: E731
                deep = {"states": ["pending"], "limit": 50, "offset": 7450}
                cases: list[tuple[str, str, Callable[[], object]]] = [
                    ("/fleet", "compute nodes --json", lambda: json.dumps([n.model_dump(mode="json") for n in client.node_status()])),
                    ("/queue", "jobs list --state pending --json", jobs(states=["pending"], limit=50)),
                    ("/queue?page=150", "(same, offset 7450)", jobs(**deep)),
                    ("/jobs", "jobs list --json", jobs(limit=50)),
                    ("/jobs?page=150&state=pending", "(same, offset 7450)", jobs(**deep)),
                    (f"/jobs/{job_id}", "jobs status ID --json", lambda: client.get(job_id).model_dump_json()),
                    ("/campaigns", "old path: status --json (Optuna storage)", old_list),
                    (f"/campaigns/{CAMPAIGN}", "old path: status NAME --json (Optuna storage)", old_status),
                    (f"/campaigns/{CAMPAIGN}?page=20", "(same)", old_status),
                    (f"/campaigns/{CAMPAIGN}?min.x=0&max.x=1.5&in.kind=a&state=complete&sort=value", "(same)", old_status),
                    (f"/campaigns/{CAMPAIGN}/compare?t=3&t=500&t=999", "(same)", old_status),
                    *[(f"/api/campaigns/{CAMPAIGN}/charts/{chart}", "(same)", old_status) for chart in CHARTS],
                ]  # fmt: skip
                rows: list[tuple[str, float | None, float | None, float | None, str, float]] = []
                for path, baseline, call in cases:
                    server = Server(env)
                    try:
                        server.wait_serving()
                        with httpx.Client(base_url=server.url, timeout=60) as web:
                            cold = timed(partial(_ok, web, path))
                            time.sleep(SETTLE_S)
                            warm = [timed(partial(_ok, web, path)) for _ in range(args.runs)]
                    finally:
                        server.stop()
                    base = statistics.median(timed(call) for _ in range(args.runs))
                    rows.append((f"`{path}`", cold, statistics.median(warm), max(warm), baseline, base))

                page = f"/campaigns/{CAMPAIGN}"
                server = Server(env)
                try:
                    server.wait_serving()
                    with httpx.Client(base_url=server.url, timeout=60) as web:
                        _ok(web, f"/campaigns/{SMALL}")  # imports the campaign machinery, reads the small ledger
                        time.sleep(SETTLE_S)
                        first = timed(lambda: _ok(web, page))
                        after, old_after = [], []
                        drawn: dict[str, list[float]] = {chart: [] for chart in CHARTS}
                        for _ in range(args.runs):
                            add_trial(writer)
                            after.append(timed(lambda: _ok(web, page)))
                            for chart, times in drawn.items():  # each drawn afresh: the ledger changed
                                add_trial(writer)
                                times.append(timed(partial(_ok, web, f"/api/campaigns/{CAMPAIGN}/charts/{chart}")))
                            add_trial(writer)
                            old_after.append(timed(old_status))
                finally:
                    server.stop()
                rows.append((f"`{page}` first read (machinery imported)", first, None, None,
                             "old path: status NAME --json", base_of(rows, page)))  # fmt: skip
                rows.append((f"`{page}` right after a ledger write", None, statistics.median(after), max(after),
                             "old path, after a write", statistics.median(old_after)))  # fmt: skip
                for chart, times in drawn.items():
                    rows.append((f"`/api/campaigns/{CAMPAIGN}/charts/{chart}` right after a ledger write", None,
                                 statistics.median(times), max(times), "old path, after a write",
                                 statistics.median(old_after)))  # fmt: skip

                starts = []
                for _ in range(3):
                    server = Server(env)
                    try:
                        starts.append(server.first_answer())
                    finally:
                        server.stop()
                server = Server(env, importtime=True)
                try:
                    server.wait_serving()
                    at_serving = server.imported(HEAVY)
                    server.first_answer()
                    at_fleet = server.imported(HEAVY)
                finally:
                    server.stop()
                cli_s = min(_wall(CLI + ["jobs", "list", "--json"], env) for _ in range(3))
        finally:
            stop_daemon(home, stop_jobs=True, wait_s=120)

    n_trials = args.trials
    print(f"\n{args.jobs} jobs ({args.jobs - 4} pending), {n_trials} trials (+1 per write); warm: median of "
          f"{args.runs} runs; target < {TARGET_MS:.0f} ms per page\n")  # fmt: skip
    print(
        "| page | cold ms | warm median ms | warm max ms | baseline (in-process read + JSON of) | baseline ms "
        f"| cold / baseline | warm / baseline | < {TARGET_MS:.0f} ms |"
    )
    print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |")
    for name, cold_ms, warm_ms, worst, baseline, base in rows:
        shown = [v for v in (cold_ms, warm_ms) if v is not None]
        ok = "yes" if all(v < TARGET_MS for v in shown) else "NO"
        print(
            f"| {name} | {_ms(cold_ms)} | {_ms(warm_ms)} | {_ms(worst)} | {baseline} | {base:.1f} | "
            f"{_ratio(cold_ms, base)} | {_ratio(warm_ms, base)} | {ok} |"
        )
    walls, cpus = [w for w, _ in starts], [c for _, c in starts]
    print(
        f"\nstart-up of `autoresearch ui` (process start to the first 200 of /fleet), 3 starts: wall median "
        f"{statistics.median(walls):.2f} s (min {min(walls):.2f} s), CPU used by then median "
        f"{statistics.median(cpus):.2f} s; `autoresearch jobs list --json` (whole process, wall): {cli_s:.2f} s; "
        f"ratio {statistics.median(walls) / cli_s:.2f}; load average at the end {os.getloadavg()[0]:.1f}"
    )
    print(
        f"heavy modules imported when it started serving: {at_serving or 'none'}; "
        f"by its first /fleet answer: {at_fleet or 'none'} (of {', '.join(HEAVY)})"
    )


def _ok(web: httpx.Client, path: str) -> None:
    answer = web.get(path)
    assert answer.status_code == 200, f"{path}: {answer.status_code} {answer.text[:300]}"


def base_of(rows: list[tuple[Any, ...]], page: str) -> float:
    return next(row[5] for row in rows if row[0] == f"`{page}`")


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def _ratio(value: float | None, base: float) -> str:
    return "" if value is None else f"{value / base:.2f}"


def _wall(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()
