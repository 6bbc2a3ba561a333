"""Hardware provenance: the `validity:` section, and what a trial records of where it ran and
how fast (the rule that calls a result suspect is in `autoresearch.campaign.suspects`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from autoresearch.campaign._base import Section
from autoresearch.campaign.views import MIN_SPEED_RATIO, STEPS_PER_S, VIRTUAL_GPU, gpu_model_of, nodes_of

UNKNOWN_GPU = "unknown"
"""The GPU model recorded for physical GPUs no probe of the node reported a model for."""


class Validity(Section):
    """When a result counts as suspect, and what the campaign does about it."""

    min_speed_ratio: Annotated[float, Field(gt=0, le=1)] = MIN_SPEED_RATIO
    """A trial slower than this fraction of the median speed of the complete trials on its GPU
    model is suspect (0 < ratio <= 1)."""
    speed_metric: Annotated[str | None, Field(min_length=1)] = None
    """A metric the script prints (e.g. `tokens_per_sec`) whose mean is its speed; default: steps
    per second, from the objective's reported steps over the time its attempts ran."""
    rerun_suspect: bool = True
    """Re-run once, on another node, a suspect trial that would be the best, before it may be
    declared best (both results are kept; the re-run names it in `suspect_rerun_of`)."""


class AttemptProvenance(BaseModel):
    """Where one attempt of a trial's job ran, and what the node's probes saw meanwhile."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    attempt: int
    """The attempt's number in its job (1, 2 ...)."""
    node: str
    """The node it ran on (a gang: its first member's)."""
    gpus: list[int] = Field(default_factory=list)
    """GPU indices it held there."""
    gpu_model: str = VIRTUAL_GPU
    """The GPU model the node's probe saw (`virtual` on virtual slots)."""
    driver: str = ""
    """The driver version the node's probe saw (empty on virtual slots)."""
    started_at: float
    """Unix time it started."""
    ended_at: float | None = None
    """Unix time it ended."""
    degraded: list[str] = Field(default_factory=list)
    """What probes of its node reported at degraded or worse while it ran (e.g. a throttle)."""


class Provenance(BaseModel):
    """Where a trial ran and how fast: recorded when its job ends."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    attempts: list[AttemptProvenance] = Field(default_factory=list)
    """Every attempt of its job, in order."""
    speed: float | None = None
    """Steps per second (or the mean of `validity.speed_metric`); None when nothing was reported."""
    speed_unit: str = STEPS_PER_S
    """`steps/s`, or the name of `validity.speed_metric`."""

    @property
    def gpu_model(self) -> str:
        """The GPU model of its last attempt (what its speed is compared within)."""
        return gpu_model_of(self.attempts)

    @property
    def nodes(self) -> list[str]:
        """The nodes its attempts ran on, in order, without repeats."""
        return nodes_of(self.attempts)
