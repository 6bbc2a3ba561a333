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


def base_dir_of(info: ValidationInfo) -> Path:
    """The folder relative paths resolve against."""
    return Path((info.context or {}).get("base_dir") or os.getcwd())


def paths_checked(info: ValidationInfo) -> bool:
    """Whether paths must exist."""
    return bool((info.context or {}).get("check_paths", True))
