"""`policy.pruner`: which pruner stops losing trials early, and when it may.

A plain string (`median`) is the mapping with that kind and the defaults. Whatever the kind:
- no trial is pruned until `startup_trials` trials have completed, nor before at least one has
  (its last step is the campaign's known last step);
- no trial is pruned at a step before `warmup_steps`;
- a trial is judged only every `interval_steps` steps from `warmup_steps` on;
- no trial is pruned at or after the last step the campaign's completed trials reported: a trial
  that reached it has run to its end, whatever the pruner would say.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any

from pydantic import Field, GetJsonSchemaHandler, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from autoresearch.campaign._base import Section


class PrunerKind(str, enum.Enum):
    none = "none"
    median = "median"
    successive_halving = "successive_halving"


class PrunerSettings(Section):
    """Which pruner judges running trials, and the gates before it may prune."""

    kind: PrunerKind = PrunerKind.median
    """`median` (stop a trial worse than the median of completed trials at the same step),
    `successive_halving`, or `none` (every trial runs to its end)."""
    startup_trials: Annotated[int, Field(ge=0, le=100_000)] = 5
    """No trial is pruned before this many trials have completed."""
    warmup_steps: Annotated[int, Field(ge=0)] = 0
    """No trial is pruned at a step below this."""
    interval_steps: Annotated[int, Field(ge=1)] = 1
    """A trial is judged every this many steps (counted from warmup_steps)."""

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return {"kind": data} if isinstance(data, (str, PrunerKind)) else data

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        mapping = handler(core_schema)
        return {"anyOf": [{"enum": [k.value for k in PrunerKind]}, mapping]}

    def allows(self, step: int, completed: int) -> bool:
        """Whether the gates let a trial at `step` be judged, with `completed` trials completed."""
        if self.kind is PrunerKind.none or completed < self.startup_trials or step < self.warmup_steps:
            return False
        return (step - self.warmup_steps) % self.interval_steps == 0

    def describe(self) -> str:
        """The settings in words, as `config check` prints them."""
        return (f"startup_trials {self.startup_trials}, warmup_steps {self.warmup_steps}, "
                f"interval_steps {self.interval_steps}")
