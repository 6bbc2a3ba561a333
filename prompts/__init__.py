"""Prompt templates of the LLM policy: Markdown files with `$placeholders` (string.Template).

`system.md` frames the campaign; `propose.md` and `replan.md` are the node prompts. A campaign
adds its own instructions (policy.instructions_file, like a program.md) through the
`$instructions` placeholder of the system prompt. Write `$$` for a literal dollar sign.
"""

from __future__ import annotations

from importlib import resources
from string import Template

NAMES = ("system", "propose", "replan")
"""The templates shipped in this package."""


def load(name: str) -> str:
    """The raw text of template `name` (one of NAMES)."""
    if name not in NAMES:
        raise ValueError(f"no prompt template {name!r}; templates: {', '.join(NAMES)}")
    return resources.files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8")


def render(template: str, /, **values: object) -> str:
    """Template `template` with every `$placeholder` filled; ValueError names a missing one."""
    try:
        return Template(load(template)).substitute({key: str(value) for key, value in values.items()})
    except KeyError as exc:
        raise ValueError(f"prompt template {template}.md needs a value for ${exc.args[0]}") from None


__all__ = ["NAMES", "load", "render"]
