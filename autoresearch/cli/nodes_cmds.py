"""`autoresearch compute nodes | cordon | uncordon | inject-fault`: node health for people."""

from __future__ import annotations

import time

import typer
from rich.table import Table

from autoresearch.cli._common import JSON_OPTION, console, fail, print_json
from autoresearch.cli._compute_group import compute_app
from compute import Client, ComputeError, UncordonFailed
from compute.health import FaultKind

KINDS = "|".join(k.value for k in FaultKind)


def _client() -> Client:
    return Client(autostart=False)


def _ago(ts: float | None) -> str:
    return "never" if ts is None else f"{max(0.0, time.time() - ts):.0f}s ago"


@compute_app.command("nodes")
def nodes(as_json: bool = JSON_OPTION) -> None:
    """Nodes with state, health, GPU slots (used/free) and the reason of their last change."""
    with _client() as client:
        rows = client.node_status()
    if as_json:
        print_json(rows)
        return
    if not rows:
        console.print("no nodes yet: start the daemon with `autoresearch compute up`", highlight=False)
        return
    table = Table("node", "state", "health", "GPUs used", "free", "probed", "reason")
    for n in rows:
        table.add_row(n.name, n.state.value, n.health.value, f"{n.gpus_used}/{len(n.gpus)}", str(n.gpus_free),
                      _ago(n.last_probe_at), n.reason)
    console.print(table)
    if any(n.virtual for n in rows):
        console.print("virtual nodes (fault drills: `autoresearch compute inject-fault NODE KIND`)", highlight=False)


@compute_app.command("cordon")
def cordon(
    node: str = typer.Argument(..., help="Node name, as `compute nodes` lists it."),
    reason: str = typer.Option("", "--reason", help="Why (shown in `compute nodes` and the event log)."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Take a node out of service: no new work; its running jobs finish."""
    with _client() as client:
        try:
            done = client.cordon(node, reason)
        except ComputeError as err:
            fail(str(err))
    if as_json:
        print_json(done)
        return
    console.print(f"node {node} cordoned: it takes no new work; running jobs finish. "
                  f"`autoresearch compute uncordon {node}` returns it after a passing probe.", highlight=False)


@compute_app.command("uncordon")
def uncordon(
    node: str = typer.Argument(..., help="A cordoned node."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds to wait for its probe."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Return a cordoned node; exits only after it passed a health probe (exit 1 if it failed one)."""
    with _client() as client:
        try:
            back = client.uncordon(node, timeout=timeout)
        except UncordonFailed as err:
            fail(str(err), code=1)
        except ComputeError as err:
            fail(str(err))
    if as_json:
        print_json(back)
        return
    console.print(f"node {node} is active again: {back.reason}", highlight=False)


@compute_app.command("inject-fault")
def inject_fault(
    node: str = typer.Argument(..., help="A virtual node (`compute up --virtual-nodes N`)."),
    kind: str = typer.Argument(..., help=f"What to imitate: {KINDS}."),
    probes: int = typer.Option(1, "--probes", help="How many probes in a row it turns critical (degraded: throttle)."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Fault drill: the node's running jobs fail that way and its next probe turns critical
    (`throttle`: its probes turn degraded and its jobs keep running; their results turn suspect)."""
    with _client() as client:
        try:
            fault = client.inject_fault(node, kind, probes)
        except (ComputeError, ValueError) as err:  # FaultRefused (a real node) is a ValueError
            fail(str(err))
    if as_json:
        print_json(fault)
        return
    if fault.kind is FaultKind.throttle:
        console.print(f"fault 'throttle' armed on {node}: its next {probes} probe(s) report a degraded sw thermal "
                      "slowdown; its running jobs keep running, and the campaign trials they run turn suspect. "
                      "Watch with `autoresearch compute nodes`.", highlight=False)
        return
    console.print(f"fault '{fault.kind.value}' armed on {node}: its running jobs fail that way and its next "
                  f"{probes} probe(s) turn critical (quarantine). Watch with `autoresearch compute nodes`.",
                  highlight=False)
