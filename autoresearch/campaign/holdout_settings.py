"""The `objective.holdout` section of the campaign config: the hidden holdout's command and metric,
checked where the config is read (placeholders render; in a code-edit campaign every file the
command names is fixed). The results and the summary live in `autoresearch.campaign.holdout`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

from pydantic import Field

from autoresearch.campaign._base import Section

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


def unfixed_file(item: str, cwd: Path, editable: Sequence[str], fixed: Sequence[str]) -> str | None:
    """Why a file that holdout command item `item` names (as itself or after `=`), under `cwd`, may not
    back the holdout of a code-edit campaign with these `editable` and `fixed` paths; None when it may."""
    for text in dict.fromkeys((item, item.partition("=")[2])):
        if not text or "{" in text or not (path := cwd / text).exists():
            continue
        try:
            rel = path.resolve().relative_to(cwd)
        except ValueError:
            continue  # outside the campaign's folder: no trial's patch can touch it
        if rel == Path("."):
            continue
        if _under(rel, editable):
            return (f"{rel} is editable (code.editable), so the policy could change its own holdout; "
                    "move the evaluation into a file listed in code.fixed")
        if not _under(rel, fixed):
            return (f"{rel} is not listed in code.fixed; a holdout must run fixed code: add {str(rel)!r} "
                    "to code.fixed")
    return None


def _under(rel: Path, entries: Sequence[str]) -> bool:
    return any(rel == Path(e) or Path(e) in rel.parents for e in entries)


__all__ = ["HOLDOUT_PLACEHOLDERS", "Holdout", "unfixed_file"]
