"""Fault drills through the real daemon; prints one table.

    python benchmarks/health_drill.py [--repeats 9] [--jobs 60] [--kind xid]

- fault -> quarantine: `Client.inject_fault(node, kind)` on an idle virtual node, to the
  daemon's `quarantined` event for it (both timestamps from the store's event log), median
  and max of `--repeats` drills. The node is released after one passing probe between
  drills (release_after_passes=1, short backoff) so every drill starts from a healthy node.
- fault -> rerun: the same with an attempt running on the node: from the injection to the
  job's next attempt starting on another node.
- mid-run drill: `--jobs` jobs (`sleep 1`, 1 GPU, max_retries 0) on 3 virtual nodes of 2
  GPU slots; when a third of them have finished, a fault is injected on the node running
  the most attempts. Reported: jobs succeeded, attempts requeued (infra), jobs lost (not
  succeeded), attempts started on the bad node after the fault, makespan.

Probes here are the built-in ones (gpu, cuda: both skip without an NVIDIA GPU and torch),
so the numbers are the daemon's own reaction time; on a GPU host add one nvidia-smi query.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from compute import Client, DaemonConfig, JobSpec, JobState, NodeState, start_daemon, stop_daemon  # noqa: E402
from compute.health import HealthConfig  # noqa: E402

TIMEOUT = 300.0
QUICK_RELEASE = HealthConfig(release_after_passes=1, release_pass_spacing_s=0, recheck_backoff_s=0.3,
                             recheck_backoff_max_s=0.3)


def wait_for(check, what: str, timeout: float = TIMEOUT):
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.01)
    return value


def event_after(client: Client, node: str, kind: str, since: int):
    return next((e for e in client.events(node=node, since_id=since) if e.kind == kind), None)


def state(client: Client, node: str) -> NodeState:
    return next(n.state for n in client.nodes() if n.name == node)


def last_event_id(client: Client) -> int:
    events = client.events(since_id=0, limit=1_000_000)
    return events[-1].id if events else 0


def quarantine_times(client: Client, kind: str, repeats: int) -> list[float]:
    """Injection -> quarantined event, on idle node local-0; the node is released between drills."""
    times = []
    for _ in range(repeats):
        wait_for(lambda: state(client, "local-0") is NodeState.active, "local-0 active")
        since = last_event_id(client)
        client.inject_fault("local-0", kind)
        injected = event_after(client, "local-0", "fault_injected", since)
        out = wait_for(lambda since=since: event_after(client, "local-0", "quarantined", since), "quarantine")
        times.append(out.ts - injected.ts)
    return times


def rerun_times(client: Client, kind: str, repeats: int, workdir: Path) -> list[float]:
    """Injection on the node running a job -> that job's next attempt started elsewhere."""
    times = []
    for i in range(repeats):
        wait_for(lambda: all(n.state is NodeState.active for n in client.nodes()), "all nodes active")
        gate = workdir / f"gate-{i}"
        job = client.submit(JobSpec(argv=["sh", "-c", f'while [ ! -e "{gate}" ]; do sleep 0.05; done'],
                                    resources={"gpus": 1}, max_retries=0))
        first = wait_for(lambda job=job: (j := client.get(job.id)).attempts and j.attempts[0], "first attempt")
        since = last_event_id(client)
        client.inject_fault(first.node, kind)
        injected = event_after(client, first.node, "fault_injected", since)
        second = wait_for(lambda job=job: len((j := client.get(job.id)).attempts) == 2 and j.attempts[1], "rerun")
        times.append(second.started_at - injected.ts)
        gate.touch()
        client.wait(job.id, timeout=TIMEOUT)
    return times


def mid_run_drill(client: Client, kind: str, n_jobs: int) -> dict[str, float]:
    start = time.time()
    ids = [client.submit(JobSpec(argv=["sleep", "1"], resources={"gpus": 1}, max_retries=0)).id for _ in range(n_jobs)]
    wait_for(lambda: client.list(states=[JobState.succeeded], limit=n_jobs).__len__() >= n_jobs // 3, "a third done")
    running = [j.last_attempt.node for j in client.list(states=[JobState.running], limit=n_jobs) if j.last_attempt]
    bad = max(sorted(set(running)), key=running.count) if running else "local-1"
    since = last_event_id(client)
    client.inject_fault(bad, kind)
    injected = event_after(client, bad, "fault_injected", since).ts
    wait_for(lambda: event_after(client, bad, "quarantined", since), "quarantine")
    jobs = client.wait(ids, timeout=TIMEOUT)
    attempts = [a for j in jobs for a in j.attempts]
    return {
        "bad_node": bad,
        "succeeded": sum(j.state is JobState.succeeded for j in jobs),
        "lost": sum(j.state is not JobState.succeeded for j in jobs),
        "requeued": sum(a.outcome is not None and a.outcome.value == "infra_failed" for a in attempts),
        "user_retries": sum(j.retries_used for j in jobs),
        "after_fault": sum(a.node == bad and a.started_at > injected for a in attempts),
        "makespan_s": max(a.ended_at for a in attempts) - start,
    }


def run(config: DaemonConfig, body):
    with tempfile.TemporaryDirectory(prefix="ar-health-") as home:
        start_daemon(home, config)
        client = Client(home, autostart=False)
        try:
            return body(client, Path(home))
        finally:
            client.close()
            stop_daemon(home, stop_jobs=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--jobs", type=int, default=60)
    parser.add_argument("--kind", default="xid", help="thermal|ecc|xid|nccl|down")
    args = parser.parse_args()
    nodes = dict(virtual_nodes=3, gpus_per_node=2, grace_s=1.0)
    q = run(DaemonConfig(**nodes, health=QUICK_RELEASE), lambda c, _: quarantine_times(c, args.kind, args.repeats))
    r = run(DaemonConfig(**nodes, health=QUICK_RELEASE),
            lambda c, home: rerun_times(c, args.kind, args.repeats, home))
    d = run(DaemonConfig(**nodes), lambda c, _: mid_run_drill(c, args.kind, args.jobs))

    rows = [
        (f"fault -> quarantine ({args.kind}, idle node)", f"median {statistics.median(q) * 1000:.0f} ms, "
         f"max {max(q) * 1000:.0f} ms over {len(q)}"),
        (f"fault -> rerun on another node ({args.kind})", f"median {statistics.median(r) * 1000:.0f} ms, "
         f"max {max(r) * 1000:.0f} ms over {len(r)}"),
        (f"mid-run drill: {args.jobs} jobs, 3 nodes x 2 slots, {d['bad_node']} bad after 1/3",
         f"{d['succeeded']}/{args.jobs} succeeded, {d['lost']} lost"),
        ("  attempts requeued (infra) / user retries spent", f"{d['requeued']} / {d['user_retries']}"),
        ("  attempts started on the bad node after the fault", str(d["after_fault"])),
        ("  makespan (ideal: 1/3 of the jobs on 6 slots, the rest on 4)",
         f"{d['makespan_s']:.1f} s (ideal {args.jobs / 3 / 6 + args.jobs * 2 / 3 / 4:.1f} s)"),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"{'health drill':<{width}}  result")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
