"""The public names of the LLM policy's packages are exported and importable."""

from __future__ import annotations

import importlib

import pytest

import prompts


@pytest.mark.parametrize("module", ["autoresearch.policy", "autoresearch.workspace", "prompts"])
def test_all_is_complete_and_sorted(module: str) -> None:
    mod = importlib.import_module(module)
    assert sorted(mod.__all__) == list(mod.__all__)
    for name in mod.__all__:
        assert getattr(mod, name) is not None


def test_every_template_renders_only_with_all_its_values() -> None:
    for name in prompts.NAMES:
        assert prompts.load(name).strip()
    with pytest.raises(ValueError, match=r"replan.md needs a value for \$status"):
        prompts.render("replan", history="", research_log="", steering="")
    with pytest.raises(ValueError, match="no prompt template 'chat'"):
        prompts.load("chat")
