"""OptunaPolicy, and LLMPolicy with the shipped ScriptedProvider, pass the `Policy` conformance suite."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from autoresearch.campaign import Ledger, TrialLedger
from autoresearch.llm import Message, Role, ScriptedProvider, ToolCall
from autoresearch.policy import LLMPolicy, OptunaPolicy
from autoresearch.testing import PolicyHarness, PolicySuite
from skills import SkillContext
from skills.tooldef import ToolDef


def researcher() -> Callable[[list[Message], list[ToolDef]], ToolCall]:
    """A scripted model: proposes the next points of a fixed sequence inside the suite's space
    (as many as asked), and writes a research-log entry at a replan."""
    drawn = 0

    def script(messages: list[Message], tools: list[ToolDef]) -> ToolCall:
        nonlocal drawn
        if "write_research_log" in {t.name for t in tools}:
            return ToolCall(name="write_research_log", arguments={"learned": "x matters", "next": "more x"})
        prompt = next(m.content for m in messages if m.role is Role.USER)
        asked = re.search(r"Propose up to (\d+) new trial", prompt)
        assert asked is not None, "the propose prompt no longer says how many trials it wants"
        n = int(asked.group(1))
        ideas = []
        for i in range(drawn, drawn + n):
            params = {"x": round(-5.0 + (i * 1.37) % 10.0, 3), "y": i % 11, "kind": "abc"[i % 3]}
            ideas.append({"params": params, "hypothesis": f"point {i}", "expected_effect": "a higher score"})
        drawn += n
        return ToolCall(name="propose_trials", arguments={"trials": ideas})

    return script


def _optuna(tmp_path: Path, tracking: Any) -> PolicyHarness:
    return PolicyHarness(build=OptunaPolicy, open=Ledger.open, base_dir=tmp_path)


def _llm(tmp_path: Path, tracking: Any) -> PolicyHarness:
    def build(ledger: TrialLedger) -> LLMPolicy:
        context = SkillContext.create(home=ledger.folder.parents[1], tracking_uri=tracking.tracking_uri)
        return LLMPolicy(ledger, ScriptedProvider(researcher()), skill_context=context)

    settings = {"kind": "llm", "provider": "openai", "model": "scripted"}
    return PolicyHarness(build=build, open=Ledger.open, base_dir=tmp_path, policy=settings)


class TestPolicy(PolicySuite):
    @pytest.fixture(params=[_optuna, _llm], ids=["optuna", "llm-scripted"])
    def harness(self, request: pytest.FixtureRequest, home: Path, tmp_path: Path, tracking: Any) -> PolicyHarness:
        return request.param(tmp_path, tracking)
