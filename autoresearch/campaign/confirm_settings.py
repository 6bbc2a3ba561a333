"""The `confirm:` section of the campaign config: re-run the leaders with new seeds before a
winner is declared (docs/results.md, "Confirmation of the leaders")."""

from __future__ import annotations

import enum
from typing import Annotated, Any

from pydantic import Field

from autoresearch.campaign._base import Section
from autoresearch.campaign.params import located


class ConfirmWhen(str, enum.Enum):
    """When the leaders are re-run."""

    end = "end"
    """Once the rest of the budget is what confirmation needs: the top-k are confirmed together."""
    new_best = "new_best"
    """Also whenever a new best appears: the leader is confirmed at once (the rest of the top-k at the end)."""


class ConfirmSettings(Section):
    """Confirmation of the leaders: the `top_k` configurations with the best noise-aware estimate
    (a Gaussian process's posterior mean over the parameters; else the best mean) are each re-run
    `seeds` times with new seeds; the winner is the best mean (with sd and n)."""

    top_k: Annotated[int, Field(ge=1, le=100)] = 3
    """How many leading configurations are confirmed."""
    seeds: Annotated[int, Field(ge=1, le=100)] = 3
    """Re-runs of each, with new seeds (each counts against budget.max_trials)."""
    when: ConfirmWhen = ConfirmWhen.end
    """`end`: before the winner is declared; `new_best`: also as soon as a new best appears."""

    @property
    def reserve(self) -> int:
        """Trials of `budget.max_trials` kept for confirmation."""
        return self.top_k * self.seeds


def no_noise_seeds(data: Any) -> Any:
    """`data` unchanged, or the migration error for a `code:` section that still says `noise_seeds`."""
    if isinstance(data, dict) and "noise_seeds" in data:
        raise located(("noise_seeds",), (
            "code.noise_seeds was replaced by the confirm: section (one mechanism for every campaign): "
            f"remove noise_seeds and write `confirm: {{top_k: 3, seeds: {data['noise_seeds']}, when: new_best}}` "
            "(docs/results.md, 'Confirmation of the leaders')"
        ))
    return data


__all__ = ["ConfirmSettings", "ConfirmWhen", "no_noise_seeds"]
