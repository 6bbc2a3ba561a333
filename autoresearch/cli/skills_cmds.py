"""`autoresearch skills call|export-agent`: the typed skills from the command line (`skills list`:
skills_list.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from collections.abc import Callable
from typing import Any

import click

from autoresearch.cli._common import fail, print_json
from autoresearch.cli.skills_list import campaign_option, cli_registry
from skills import DEFAULT_MAX_OUTPUT_BYTES, ErrorCode, SkillContext, SkillError

cli = click.Group()


def context_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """`--home`, `--tracking-uri`, `--max-bytes`: where skills run (`skills call`, `mcp`)."""
    for option in reversed([
        click.option("--home", type=click.Path(path_type=Path), help="State dir (default $AUTORESEARCH_HOME or "
                     "~/.autoresearch)."),
        click.option("--tracking-uri", help="MLflow tracking URI or .db path (default sqlite under the state dir)."),
        click.option("--max-bytes", type=int, default=DEFAULT_MAX_OUTPUT_BYTES, show_default=True,
                     help="Bound on each skill's output (bytes of JSON)."),
    ]):  # fmt: skip
        func = option(func)
    return func


# Exit code of a failed call: 1 for what went wrong on our side (a service down, a bug), 2 for
# everything the caller must change (bad JSON or arguments, unknown skill or id, a refused request).
_OUR_ERRORS = {ErrorCode.unavailable, ErrorCode.internal}


def cli_context(home: Path | None, tracking_uri: str | None, max_bytes: int, campaign: str | None) -> SkillContext:
    """The context skills run with; with a campaign, its ledger and (unless given) its MLflow store.
    Bad options exit 2 with the reason."""
    try:
        if campaign is None:
            return SkillContext.create(home=home, tracking_uri=tracking_uri, max_output_bytes=max_bytes)
        from autoresearch.campaign import Ledger, LedgerError
        from autoresearch.policy.agent_skills import AgentContext

        try:
            ledger = Ledger.load(campaign, home)
        except LedgerError as exc:
            fail(str(exc))
        base = SkillContext.create(home=home, tracking_uri=tracking_uri or ledger.campaign.tracking.uri,
                                   max_output_bytes=max_bytes)  # fmt: skip
    except ValueError as exc:
        fail(str(exc))
    return AgentContext(home=base.home, tracking=base.tracking, max_output_bytes=base.max_output_bytes, ledger=ledger)


@cli.command("call")
@click.argument("name")
@click.option("--json", "arguments", default="{}", show_default=True, help="Arguments as one JSON object; '-' reads "
              "it from stdin.")
@context_options
@campaign_option
def call_skill(name: str, arguments: str, home: Path | None, tracking_uri: str | None, max_bytes: int,
               campaign: str | None) -> None:
    """Call skill NAME (see `autoresearch skills list`) and print its output as JSON. A failed call prints the typed error and exits 2
    (bad JSON or arguments, unknown skill or id, a refused request) or 1 (service unavailable, internal error)."""
    if arguments == "-":
        arguments = sys.stdin.read()
    ctx = cli_context(home, tracking_uri, max_bytes, campaign)
    try:
        output = cli_registry(campaign).call(name, arguments, ctx)
    finally:
        ctx.close()
    print_json(output)
    if isinstance(output, SkillError):
        fail(output.message, code=1 if output.error in _OUR_ERRORS else 2)


@cli.command("export-agent")
@click.argument("folder", type=click.Path(path_type=Path))
def export_agent(folder: Path) -> None:
    """Write FOLDER (created if absent), an Agent Skills folder (SKILL.md + reference files) teaching a coding agent to drive autoresearch."""
    from autoresearch.cli.agent_bundle import write_bundle

    try:
        paths = write_bundle(folder)
    except OSError as exc:
        fail(f"cannot write the agent skill bundle to {folder}: {exc}; pass a writable folder")
    for path in paths:
        sys.stdout.write(f"{path}\n")
