"""`autoresearch compute project set | rm`, `compute projects`: the fleet's shares (docs/projects.md).
`projects` reads the store with sqlite3 (`compute.project_report`: no pydantic)."""

from __future__ import annotations

import time
from contextlib import closing
from typing import Any

import click

from autoresearch.cli._common import console, fail, json_option, print_json
from compute.paths import ComputePaths

cli = click.Group()


@cli.group("project", no_args_is_help=True)
def project_group() -> None:
    """Create, change and remove projects (GPU and CPU quotas, fair share)."""


@project_group.command("set")
@click.argument("name")
@click.option("--quota-gpus", type=int, help="GPUs guaranteed to its jobs (a new project: 0).")
@click.option("--quota-cpus", type=float, help="The most CPUs its running jobs may hold at once (default: no limit).")
@click.option("--weight", type=float, help="Fair-share weight for idle GPUs (default 1).")
@click.option("--max-priority", help="Highest priority its jobs may ask for (0-100 or a name; default 100).")
@click.option("--borrow/--no-borrow", default=None, help="Its jobs may run beyond the quota on idle GPUs (default: borrow).")
@click.option("--lend/--no-lend", default=None, help="Others may borrow its unused quota until it needs it (default: lend).")
@json_option
def set_project(name: str, quota_gpus: int | None, quota_cpus: float | None, weight: float | None,
                max_priority: str | None, borrow: bool | None, lend: bool | None, as_json: bool) -> None:
    """Create or change a project (NAME: letters, digits, _ . -); options not given keep their value."""
    from compute import Client, ComputeError

    try:
        with Client(autostart=False) as client:
            project = client.set_project(name, quota_gpus, weight, max_priority, borrow, lend, quota_cpus)
    except ComputeError as err:
        fail(str(err))
    if as_json:
        print_json(project)
        return
    console.print(
        f"project {project.name}: quota {project.quota_gpus} GPU(s)"
        + ("" if project.quota_cpus is None else f", at most {project.quota_cpus:g} CPU(s)")
        + f", weight {project.weight:g}, "
        f"max priority {project.max_priority}, {'borrows' if project.borrow else 'does not borrow'}, "
        f"{'lends' if project.lend else 'does not lend'}",
        highlight=False,
    )


@project_group.command("rm")
@click.argument("name")
def remove_project(name: str) -> None:
    """Remove a project that has no pending or running job."""
    from compute import Client, ComputeError

    try:
        with Client(autostart=False) as client:
            client.remove_project(name)
    except ComputeError as err:
        fail(str(err))
    console.print(f"project {name} removed", highlight=False)


@cli.command("projects")
@json_option
def projects(as_json: bool) -> None:
    """Projects with quotas, GPUs and CPUs in use, borrowed and lent, pending jobs and fair-share usage."""
    rows = _project_rows(ComputePaths.of())
    if as_json:
        print_json(rows)
        return
    if not rows:
        console.print(
            "no projects: every job shares one queue by priority. Create one with "
            "`autoresearch compute project set NAME --quota-gpus N`",
            highlight=False,
        )
        return
    from rich.table import Column, Table

    names = [p["name"] + ("" if p["configured"] else " (not set)") for p in rows]
    table = Table(
        Column("project", no_wrap=True, min_width=max(map(len, names))),
        *(
            Column(c, overflow="fold")
            for c in (
                "quota",
                "in use",
                "borrowed",
                "lent",
                "CPUs",
                "pending",
                "weight",
                "max prio",
                "borrow",
                "lend",
                "usage (GPU-h)",
            )
        ),
    )
    for name, p in zip(names, rows):
        table.add_row(
            name,
            str(p["quota_gpus"]),
            str(p["in_use"]),
            str(p["borrowed"]),
            str(p["lent"]),
            f"{p['cpus_in_use']:g}" + ("" if p["quota_cpus"] is None else f" / {p['quota_cpus']:g}"),
            str(p["pending"]),
            f"{p['weight']:g}",
            str(p["max_priority"]),
            "yes" if p["borrow"] else "no",
            "yes" if p["lend"] else "no",
            f"{p['fair_share_usage']:.2f}",
        )
    console.print(table)


def _project_rows(paths: ComputePaths) -> list[dict[str, Any]]:
    """The `ProjectStatus` JSON of every project (`compute.project_report.project_rows`), from one snapshot
    of the store."""
    from compute.control import daemon_info
    from compute.project_report import half_life, project_rows, reader
    from compute.read_store import store_for_reading

    with closing(store_for_reading(paths)) as conn:
        conn.execute("BEGIN")  # one snapshot
        try:
            return project_rows(reader(conn), half_life(daemon_info(paths)), time.time())
        finally:
            conn.execute("COMMIT")
