"""The records every skill shares: input and output bases, and the typed error result."""

from __future__ import annotations

import enum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_INDEX = 2**53
"""The largest offset, number or byte position a skill takes: exact as a JSON number, and far below
where SQLite's and C's 64-bit integers overflow (an OverflowError deep inside a store or a seek)."""

Index = Annotated[int, Field(ge=0, le=MAX_INDEX)]
"""A bounded offset, trial number or byte position (0 to `MAX_INDEX`)."""


class SkillInput(BaseModel):
    """Base of every skill's input model.

    `null` for a field that has a non-null default means "use the default": strict
    OpenAI schemas send every property, optional ones as null. NaN and infinity (which Python's
    JSON reader takes) are refused for every number.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        fields = cls.model_fields
        return {
            key: value
            for key, value in data.items()
            if not (value is None and key in fields and not fields[key].is_required() and fields[key].default is not None)
        }


class SkillOutput(BaseModel):
    """Base of every skill's output model: carries the truncation flag of the output bound."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    truncated: bool = False
    """True when parts of this output were cut to stay under the output size bound."""
    truncation: str | None = None
    """What was cut and how to see more (e.g. `jobs: 40 items cut; page with offset`)."""


class ErrorCode(str, enum.Enum):
    """What kind of failure a `SkillError` reports."""

    invalid_json = "invalid_json"
    """The arguments were not a JSON object."""
    invalid_arguments = "invalid_arguments"
    """The arguments did not match the skill's input schema; `field` names the bad one."""
    unknown_skill = "unknown_skill"
    """No skill by that name in the registry."""
    not_found = "not_found"
    """An id (job, run, attempt) does not exist."""
    unavailable = "unavailable"
    """A service the skill needs (compute daemon, tracking store) could not be reached."""
    failed = "failed"
    """The skill ran and could not do what was asked; the message says why."""
    internal = "internal"
    """A bug in the skill; the message names the exception."""


class SkillError(SkillOutput):
    """The result of a skill call that did not succeed. Errors are results, not tracebacks."""

    error: ErrorCode
    """The kind of failure."""
    message: str
    """What was wrong and what to do next."""
    skill: str
    """The skill that was called."""
    field: str | None = None
    """For invalid arguments: the path of the first bad field (e.g. `resources.gpus`)."""
    details: list[str] = []
    """Every validation problem, one per line, as `field: message`."""


class SkillFailure(Exception):
    """Raised inside a skill to return a typed `SkillError` instead of an output."""

    def __init__(self, error: ErrorCode, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.error = error
        self.message = message
        self.field = field
