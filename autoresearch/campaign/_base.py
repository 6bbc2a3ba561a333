"""What every section of the campaign config shares: strictness, and the validation context.

The loader validates with context `{"base_dir": <the config file's folder>, "check_paths": bool}`:
relative paths resolve against base_dir (default: the current directory), and paths are
checked to exist unless check_paths is false (a config read back from a ledger).
"""

from __future__ import annotations

import os
from pathlib import Path

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationInfo, model_validator

from autoresearch.campaign.params import exact_scalars


class Section(BaseModel):
    """A strict, frozen part of the config; attribute docstrings become schema descriptions.

    Nothing is coerced silently: a number given as a string or a boolean, a boolean given as
    anything else, and NaN or infinity for a float are refused, naming the key."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False)
    named_numbers: ClassVar[frozenset[str]] = frozenset()
    """Number fields that also take a name (`priority: high`)."""

    @model_validator(mode="before")
    @classmethod
    def _exact(cls, data: Any) -> Any:
        return exact_scalars(cls, data, cls.named_numbers)


def resolve_path(value: Path, info: ValidationInfo, what: str) -> Path:
    """`value` made absolute against the config's folder (`~` expanded, symlinks resolved), or
    ValueError naming `what` and the path when it cannot be (a symlink loop, an unknown `~user`)."""
    base = Path((info.context or {}).get("base_dir") or os.getcwd())
    try:
        return (base / value.expanduser()).resolve()
    except (RuntimeError, OSError) as exc:  # Python 3.11 raises RuntimeError for a symlink loop
        raise ValueError(f"{what} {str(value)!r} cannot be resolved ({exc}): point it at a real folder or file, "
                         "not a symlink loop") from None


def paths_checked(info: ValidationInfo) -> bool:
    """Whether paths must exist."""
    return bool((info.context or {}).get("check_paths", True))
