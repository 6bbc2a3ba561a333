"""`autoresearch compute cordon | uncordon | inject-fault`: node health for people (`compute nodes`
lists them: autoresearch/cli/compute_cmds.py)."""

from __future__ import annotations

import click

from autoresearch.cli._common import console, fail, json_option, print_json
from compute import Client, ComputeError, UncordonFailed
from compute.health import FaultKind

KINDS = "|".join(k.value for k in FaultKind)

cli = click.Group()


def _client() -> Client:
    return Client(autostart=False)


@cli.command("cordon")
@click.argument("node")
@click.option("--reason", default="", help="Why (shown in `compute nodes` and the event log).")
@json_option
def cordon(node: str, reason: str, as_json: bool) -> None:
    """Take a node out of service: no new work; its running jobs finish (NODE: as `compute nodes` lists it)."""
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


@cli.command("uncordon")
@click.argument("node")
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Seconds to wait for its probe.")
@json_option
def uncordon(node: str, timeout: float, as_json: bool) -> None:
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


@cli.command("inject-fault")
@click.argument("node")
@click.argument("kind")
@click.option("--probes", type=int, default=1, show_default=True, help="How many probes in a row it turns critical "
              "(degraded: throttle).")
@json_option
def inject_fault(node: str, kind: str, probes: int, as_json: bool) -> None:
    """Fault drill: the node's running jobs fail that way and its next probe turns critical
    (`throttle`: its probes turn degraded and its jobs keep running; their results turn suspect).
    NODE: a virtual node (`compute up --virtual-nodes N`); KIND: thermal, ecc, xid, nccl, down or throttle."""
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
