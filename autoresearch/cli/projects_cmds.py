"""`autoresearch compute project set | rm`, `compute projects`: the fleet's shares (docs/projects.md)."""

from __future__ import annotations

import typer
from rich.table import Column, Table

from autoresearch.cli._common import JSON_OPTION, console, fail, print_json
from autoresearch.cli._compute_group import compute_app
from compute import Client, ComputeError

project_app = typer.Typer(help="Create, change and remove projects (GPU quotas, fair share).", no_args_is_help=True)
compute_app.add_typer(project_app, name="project")


@project_app.command("set")
def set_project(
    name: str = typer.Argument(..., help="Project name (letters, digits, _ . -)."),
    quota_gpus: int = typer.Option(..., "--quota-gpus", help="GPUs guaranteed to its jobs."),
    weight: float | None = typer.Option(None, "--weight", help="Fair-share weight for idle GPUs (default 1)."),
    max_priority: str | None = typer.Option(
        None, "--max-priority", help="Highest priority its jobs may ask for (0-100 or a name; default 100)."
    ),
    borrow: bool | None = typer.Option(
        None, "--borrow/--no-borrow", help="Its jobs may run beyond the quota on idle GPUs (default: borrow)."
    ),
    lend: bool | None = typer.Option(
        None, "--lend/--no-lend", help="Others may borrow its unused quota until it needs it (default: lend)."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Create or change a project; options not given keep their value."""
    try:
        with Client(autostart=False) as client:
            project = client.set_project(name, quota_gpus, weight, max_priority, borrow, lend)
    except ComputeError as err:
        fail(str(err))
    if as_json:
        print_json(project)
        return
    console.print(
        f"project {project.name}: quota {project.quota_gpus} GPU(s), weight {project.weight:g}, "
        f"max priority {project.max_priority}, {'borrows' if project.borrow else 'does not borrow'}, "
        f"{'lends' if project.lend else 'does not lend'}",
        highlight=False,
    )


@project_app.command("rm")
def remove_project(name: str = typer.Argument(..., help="Project name.")) -> None:
    """Remove a project that has no pending or running job."""
    try:
        with Client(autostart=False) as client:
            client.remove_project(name)
    except ComputeError as err:
        fail(str(err))
    console.print(f"project {name} removed", highlight=False)


@compute_app.command("projects")
def projects(as_json: bool = JSON_OPTION) -> None:
    """Projects with quota, GPUs in use, borrowed and lent, pending jobs and fair-share usage."""
    with Client(autostart=False) as client:
        rows = client.projects()
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
    names = [p.name + ("" if p.configured else " (not set)") for p in rows]
    table = Table(
        Column("project", no_wrap=True, min_width=max(map(len, names))),
        *(
            Column(c, overflow="fold")
            for c in (
                "quota",
                "in use",
                "borrowed",
                "lent",
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
            str(p.quota_gpus),
            str(p.in_use),
            str(p.borrowed),
            str(p.lent),
            str(p.pending),
            f"{p.weight:g}",
            str(p.max_priority),
            "yes" if p.borrow else "no",
            "yes" if p.lend else "no",
            f"{p.fair_share_usage:.2f}",
        )
    console.print(table)
