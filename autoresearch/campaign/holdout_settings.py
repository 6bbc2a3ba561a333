"""The `objective.holdout` section of the campaign config: the hidden holdout's command and metric,
checked where the config is read (placeholders render; in a code-edit campaign every file the
command names is fixed). The results and the summary live in `autoresearch.campaign.holdout`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from autoresearch.campaign._base import Section
from autoresearch.campaign.command_check import render_problem

if TYPE_CHECKING:
    from autoresearch.campaign.config import Campaign

HOLDOUT_PLACEHOLDERS: dict[str, str] = {
    "checkpoint_dir": "the trial's checkpoint folder (its AR_CHECKPOINT_DIR), to evaluate what it saved",
}
"""Placeholders the holdout command may use besides those of `command`."""


class Holdout(Section):
    """An evaluation the policy never sees: run for the leaders after the campaign completes."""

    command: Annotated[list[str], Field(min_length=1)]
    """argv of the evaluation, with the placeholders of `command` plus `{trial_dir}` and
    `{checkpoint_dir}`. In a code-edit campaign every file it names must be in `code.fixed`."""
    metric: Annotated[str, Field(min_length=1)]
    """The metric the evaluation prints (`key: value`, or what `metrics.patterns` capture); judged
    in the objective's mode."""
    every: bool = False
    """Evaluate every complete trial (as it completes), not only the leaders at the end."""
    top_k: Annotated[int, Field(ge=1, le=1000)] = 3
    """The leaders: this many best complete trials when the campaign completes."""


def holdout_problem(campaign: Campaign, check_paths: bool) -> tuple[tuple[Any, ...], str] | None:
    """(field path, problem) when `objective.holdout` is wrong for `campaign`, else None: an unknown
    placeholder, an item that cannot render, or (code-edit campaigns, paths checked) a file it names
    that the policy may edit or that `code.fixed` does not list."""
    from autoresearch.campaign.config import _placeholder_problem  # config imports this module

    holdout = campaign.objective.holdout
    if holdout is None:
        return None
    builtins = {"trial": 0, "seed": campaign.trial_seed(0), "campaign": campaign.name,
                "trial_dir": "/trials/trial-0", "checkpoint_dir": "/checkpoints/trial-0"}  # fmt: skip
    for i, item in enumerate(holdout.command):
        where = ("objective", "holdout", "command", i)
        problem = _placeholder_problem(item, {*campaign.search_space, *HOLDOUT_PLACEHOLDERS}) or render_problem(
            item, campaign.search_space, builtins
        )
        if problem:
            return where, f"{item!r}: {problem}"
        unfixed = _unfixed_file(campaign, item) if check_paths else None
        if unfixed:
            return where, f"{item!r}: {unfixed}"
    return None


def _unfixed_file(campaign: Campaign, item: str) -> str | None:
    """Why a file `item` names (as itself or after `=`) may not back a holdout of a code-edit campaign."""
    code = campaign.code
    if code is None or not code.editable:
        return None
    for text in {item, item.partition("=")[2]}:
        if not text or "{" in text or not (path := campaign.cwd / text).exists():
            continue
        try:
            rel = path.resolve().relative_to(campaign.cwd)
        except ValueError:
            continue  # outside the campaign's folder: no trial's patch can touch it
        if rel == Path("."):
            continue
        if _under(rel, code.editable):
            return (f"{rel} is editable (code.editable), so the policy could change its own holdout; "
                    "move the evaluation into a file listed in code.fixed")
        if not _under(rel, code.fixed):
            return (f"{rel} is not listed in code.fixed; a holdout must run fixed code: add {str(rel)!r} "
                    "to code.fixed")
    return None


def _under(rel: Path, entries: Sequence[str]) -> bool:
    return any(rel == Path(e) or Path(e) in rel.parents for e in entries)


def render_holdout(campaign: Campaign, params: Mapping[str, Any], trial_number: int, *, seed_of: int,
                   trial_dir: Path, checkpoint_dir: Path) -> list[str]:
    """The holdout job's argv for one trial (the placeholders of `Campaign.render_command`, plus
    `{checkpoint_dir}`)."""
    holdout = campaign.objective.holdout
    assert holdout is not None
    values = {**params, "trial": trial_number, "seed": campaign.trial_seed(seed_of), "campaign": campaign.name,
              "trial_dir": str(trial_dir), "checkpoint_dir": str(checkpoint_dir)}  # fmt: skip
    return [item.format_map(values) for item in holdout.command]


__all__ = ["HOLDOUT_PLACEHOLDERS", "Holdout", "holdout_problem", "render_holdout"]
