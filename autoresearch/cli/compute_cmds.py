"""`autoresearch compute up | down | status | nodes`: the per-host compute daemon and its nodes.
The reads (`status`, `nodes`) read the store with sqlite3 (`compute.reads`: no pydantic)."""

from __future__ import annotations

import time
from contextlib import closing
from typing import Any

import click

from autoresearch.cli._common import console, fail, json_option, print_json, warn
from compute.paths import ComputePaths

cli = click.Group()


@cli.command("up")
@click.option("--gpus", type=int, help="GPU slots of node `local` (default: nvidia-smi, else 4).")
@click.option("--grace", type=float, help="Seconds from SIGTERM to SIGKILL (default 30).")
@click.option("--virtual-nodes", type=int, help="Split the host into N virtual nodes.")
@click.option("--gpus-per-node", type=int, help="GPU slots per virtual node (default 4).")
@click.option("--cpus-per-node", type=float, help="CPUs per virtual node: jobs without GPUs are placed by their CPUs "
              "and spread (default: not counted).")
@click.option("--min-runtime", type=float, help="Seconds before an attempt may be preempted (default 10).")
@click.option("--fair-share-half-life", "half_life", type=float, help="Seconds: half-life of the borrowed usage fair "
              "share between projects weighs (default 3600, docs/projects.md).")
@click.option("--log-max-bytes", type=int, help="Disk cap of one attempt's log in bytes (default 256 MiB): past it "
              "the middle is cut, head and tail kept.")
@click.option("--health-config", help="YAML/JSON file of health settings: probe intervals, quarantine, command probe, "
              "failure_rules (see docs/health.md).")
@click.option("--backend", default="local", show_default=True, help="Where attempts run: `local` (this host) or `ray` "
              "(the nodes of a Ray cluster, see docs/ray.md).")
@click.option("--address", help="With --backend ray: auto | HOST:PORT | ray://HOST:PORT (default: start a local Ray "
              "instance; --gpus sets its GPUs).")
@click.option("--storage", help="With --backend ray: where the nodes meet: a path every node mounts (default: the home), "
              "or file:// | s3:// | gs:// URI of a store every node reaches (docs/ray.md).")
@json_option
def up(gpus: int | None, grace: float | None, virtual_nodes: int | None, gpus_per_node: int | None,
       cpus_per_node: float | None, min_runtime: float | None, half_life: float | None, log_max_bytes: int | None, health_config: str | None,
       backend: str, address: str | None, storage: str | None, as_json: bool) -> None:
    """Start the daemon in the background (one per AUTORESEARCH_HOME)."""
    from pydantic import ValidationError

    from compute import ComputeError, DaemonAlreadyRunning, DaemonConfig
    from compute.control import daemon_info, start_daemon
    from compute.errors import validation_message
    from compute.health import load_health_config

    settings: dict[str, Any] = {"gpus": gpus, "grace_s": grace, "virtual_nodes": virtual_nodes, "gpus_per_node": gpus_per_node,
                "cpus_per_node": cpus_per_node, "min_runtime_s": min_runtime, "backend": backend, "ray_address": address,
                "storage": storage, "fair_share_half_life_s": half_life, "log_max_bytes": log_max_bytes}
    if backend == "ray" and (virtual_nodes is not None or gpus_per_node is not None or cpus_per_node is not None):
        fail("--virtual-nodes, --gpus-per-node and --cpus-per-node split this host for the local backend; with "
             "--backend ray the nodes are the Ray cluster's (start worker nodes with `ray start --num-gpus N "
             "--num-cpus C`)")
    if address is not None and backend != "ray":
        fail(f"--address {address} is for --backend ray; add --backend ray, or drop --address to run locally")
    if storage is not None and backend != "ray":
        fail(f"--storage {storage} is for --backend ray (the local backend's attempts run on this host); "
             "add --backend ray, or drop --storage")
    if health_config is not None:
        try:
            settings["health"] = load_health_config(health_config)
        except ValueError as err:
            fail(f"--health-config: {err}")
    try:
        config = DaemonConfig(**{k: v for k, v in settings.items() if v is not None})
    except ValidationError as err:
        fail(validation_message("compute up settings", err).replace("grace_s", "--grace")
             .replace("min_runtime_s", "--min-runtime").replace("ray_address", "--address")
             .replace("fair_share_half_life_s", "--fair-share-half-life").replace("log_max_bytes", "--log-max-bytes"))
    paths = ComputePaths.of()
    try:
        start_daemon(paths.home, config, wait_s=120.0 if config.backend == "ray" else 30.0, notice=warn)
    except DaemonAlreadyRunning:
        already = True  # exit 0: what was asked for holds (`compute up` is idempotent for agents)
    except ComputeError as err:
        fail(str(err))
    else:
        already = False
    info = {**(daemon_info(paths) or {}), "already_running": already}
    if as_json:
        print_json(info)
        return
    slots = ", ".join(f"{n['name']} ({len(n['gpus'])} GPU slots)" for n in info.get("nodes", []))
    what = "already running; nothing started" if already else "running"
    console.print(f"compute daemon {what} (pid {info.get('pid')}) for {paths.home}: {slots}", highlight=False,
                  soft_wrap=True)


@cli.command("down")
@click.option("--stop-jobs", is_flag=True, help="Stop running attempts first (SIGTERM, grace, SIGKILL) and requeue "
              "their jobs.")
def down(stop_jobs: bool) -> None:
    """Stop the daemon. Running attempts keep running and the next `up` adopts them,
    unless --stop-jobs."""
    from compute import ComputeError
    from compute.control import stop_daemon

    paths = ComputePaths.of()
    try:
        pid = stop_daemon(paths.home, stop_jobs=stop_jobs)
    except ComputeError as err:
        fail(str(err), code=1)
    from tracking.served import stop_tracking_server  # not at import: the CLI's other commands need no tracking

    if stop_tracking_server(paths.home):
        console.print(f"the `mlflow server` serving {paths.home}'s tracking store to Ray nodes stopped", highlight=False)
    if pid is None:
        console.print(f"no compute daemon runs for {paths.home}", highlight=False)
    else:
        what = "its jobs were requeued" if stop_jobs else "running jobs keep running and are adopted by the next `up`"
        console.print(f"compute daemon (pid {pid}) stopped; {what}", highlight=False)


def _fleet(paths: ComputePaths) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    """The nodes (as `Node`s dump), their slot usage (as `NodeStatus`es dump) and the job counts by
    state, read with sqlite3 (`compute.reads`). A store not there yet, or at an older schema, is
    created or upgraded by `compute.Store` first, which refuses a lost one with its message."""
    from compute.read_store import store_for_reading
    from compute.reads import HELD_SQL, count_by_state, held_slots, node_views, slot_counts

    with closing(store_for_reading(paths)) as conn:
        conn.execute("BEGIN")  # one snapshot
        try:
            nodes = node_views(conn)
            return nodes, slot_counts(nodes, held_slots(conn.execute(HELD_SQL))), count_by_state(conn)
        finally:
            conn.execute("COMMIT")


@cli.command("status")
@json_option
def status(as_json: bool) -> None:
    """Whether the daemon runs, its nodes with used GPU slots, and job counts."""
    from compute.control import daemon_info, not_responding

    paths = ComputePaths.of()
    node_rows, usage, jobs = _fleet(paths)
    used = {n["name"]: n["gpus_used"] for n in usage}
    nodes = [{**n, "gpus_used": used.get(n["name"], 0)} for n in node_rows]
    report: dict[str, Any] = {"home": str(paths.home), "daemon": daemon_info(paths), "nodes": nodes, "jobs": jobs}
    if as_json:
        print_json(report)
        return
    daemon = report["daemon"]
    line = f"daemon: running (pid {daemon['pid']})" if daemon else "daemon: not running (`autoresearch compute up`)"
    if (silent := not_responding(daemon)) is not None:
        line = f"daemon: {silent}"
    console.print(f"home: {paths.home}\n{line}", highlight=False)
    from rich.table import Table

    table = Table("node", "state", "health", "GPU slots", "used", "reason")
    for n in nodes:
        table.add_row(n["name"], n["state"], n["health"], ",".join(map(str, n["gpus"])) or "-", str(n["gpus_used"]),
                      n["reason"])
    console.print(table)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report["jobs"].items())) or "none"
    console.print(f"jobs: {counts}", highlight=False)


def _ago(ts: float | None) -> str:
    return "never" if ts is None else f"{max(0.0, time.time() - ts):.0f}s ago"


@cli.command("nodes")
@json_option
def nodes(as_json: bool) -> None:
    """Nodes with state, health, GPU slots (used/free) and the reason of their last change."""
    rows = _fleet(ComputePaths.of())[1]
    if as_json:
        print_json(rows)
        return
    if not rows:
        console.print("no nodes yet: start the daemon with `autoresearch compute up`", highlight=False)
        return
    from rich.table import Table

    table = Table("node", "state", "health", "GPUs used", "free", "probed", "reason")
    for n in rows:
        table.add_row(n["name"], n["state"], n["health"], f"{n['gpus_used']}/{len(n['gpus'])}", str(n["gpus_free"]),
                      _ago(n["last_probe_at"]), n["reason"])
    console.print(table)
    if any(n["virtual"] for n in rows):
        console.print("virtual nodes (fault drills: `autoresearch compute inject-fault NODE KIND`)", highlight=False)
