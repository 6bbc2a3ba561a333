"""A scripted model for the LLM-policy arm: no network, no key, deterministic per seed.

It answers the LLM policy's real prompts through its real tool loop: at propose it calls
`propose_trials` with a hypothesis and an expected effect per trial; at replan it calls
`write_research_log`. What it proposes is a simple local search (a few random points, then
Gaussian steps around the best trials, shrinking as the budget is spent, one in five random),
read from the campaign's ledger. So the arm measures the LLM policy's plumbing and overhead
with a sensible but unintelligent researcher, not a model's judgement.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any, cast

from autoresearch.campaign import Ledger, TrialState
from autoresearch.llm import Message, Role, ScriptedProvider, ToolCall
from skills.tooldef import ToolDef

EXPLORE = 6
"""Random points before the local search starts."""
_SLOTS = re.compile(r"Propose up to (\d+) new trial")


class LocalSearchScript:
    """The script: `ScriptedProvider(LocalSearchScript(ledger, seed))`."""

    def __init__(self, ledger: Ledger, seed: int) -> None:
        self.ledger = ledger
        self.rng = random.Random(f"scripted-llm:{seed}")
        self.space = ledger.campaign.search_space
        self.rounds = 0

    def __call__(self, messages: list[Message], tools: list[ToolDef]) -> ToolCall:
        names = {tool.name for tool in tools}
        if "propose_trials" in names:
            ideas = [self._idea(params) for params in self.points(_slots(messages))]
            return ToolCall(name="propose_trials", arguments={"trials": ideas})
        self.rounds += 1
        best = self.ledger.best()
        learned = f"best so far: trial {best.number} at {best.value:.6g}" if best else "no complete trial yet"
        return ToolCall(name="write_research_log", arguments={
            "learned": f"round {self.rounds}: {learned}", "next": "step around the best trials", "stop": False,
        })  # fmt: skip

    def points(self, n: int) -> list[dict[str, Any]]:
        """`n` new parameter sets."""
        objective = self.ledger.campaign.objective
        done = [t for t in self.ledger.trials() if t.state is TrialState.complete and t.value is not None]
        done.sort(key=lambda t: cast(float, t.value) if objective.mode.value == "min" else -cast(float, t.value))
        spent = len(self.ledger.trials()) / self.ledger.campaign.budget.max_trials
        out = []
        for _ in range(n):
            if len(done) < EXPLORE or self.rng.random() < 0.2:
                out.append({name: self._uniform(spec) for name, spec in self.space.items()})
            else:
                parent = done[min(int(self.rng.expovariate(1.0)), len(done) - 1, 2)]
                scale = max(0.02, 0.25 * (1.0 - spent))
                out.append({name: self._step(spec, parent.params[name], scale) for name, spec in self.space.items()})
        return out

    def _uniform(self, spec: Any) -> Any:
        if spec.type == "categorical":
            return self.rng.choice(list(spec.choices))
        if spec.type == "int":
            return self.rng.randint(int(spec.low), int(spec.high))
        if spec.log:
            return math.exp(self.rng.uniform(math.log(spec.low), math.log(spec.high)))
        return self.rng.uniform(spec.low, spec.high)

    def _step(self, spec: Any, value: Any, scale: float) -> Any:
        if spec.type == "categorical":
            return value if self.rng.random() < 0.8 else self.rng.choice(list(spec.choices))
        if getattr(spec, "log", False):
            low, high = math.log(spec.low), math.log(spec.high)
            moved = math.exp(min(high, max(low, math.log(value) + self.rng.gauss(0.0, scale * (high - low)))))
            return min(spec.high, max(spec.low, moved))
        moved = min(spec.high, max(spec.low, value + self.rng.gauss(0.0, scale * (spec.high - spec.low))))
        return int(round(moved)) if spec.type == "int" else moved

    @staticmethod
    def _idea(params: dict[str, Any]) -> dict[str, Any]:
        return {"params": params, "hypothesis": "a step from the best trials improves the objective",
                "expected_effect": "the objective moves towards the best value seen"}  # fmt: skip


def _slots(messages: list[Message]) -> int:
    text = next((m.content for m in messages if m.role is Role.USER), "")
    found = _SLOTS.search(text)
    return int(found.group(1)) if found else 1


def scripted_provider(ledger: Ledger, seed: int) -> ScriptedProvider:
    """The scripted model for one campaign."""
    return ScriptedProvider(LocalSearchScript(ledger, seed), model="scripted-local-search")
