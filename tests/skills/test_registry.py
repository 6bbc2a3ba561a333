"""The skill framework: declaring, registering and calling skills; typed errors."""

from __future__ import annotations

import enum
from pathlib import Path

import pytest

from skills import (
    ErrorCode,
    SkillContext,
    SkillError,
    SkillFailure,
    SkillInput,
    SkillOutput,
    SkillRegistry,
)
from skills.builtin import builtin_registry


class Shape(str, enum.Enum):
    circle = "circle"
    square = "square"


class Size(SkillInput):
    width: int
    """Width in cells."""
    height: int = 1
    """Height in cells."""


class DrawInput(SkillInput):
    shape: Shape
    """What to draw."""
    size: Size
    """How big."""
    label: str | None = None
    """Optional caption."""
    repeat: int = 2
    """How many copies."""


class DrawOutput(SkillOutput):
    picture: list[str]
    """One string per copy."""


def draw(ctx: SkillContext, args: DrawInput) -> DrawOutput:
    """Draw a shape, repeated.

    Longer explanation for the model.
    """
    if args.size.width > 100:
        raise SkillFailure(ErrorCode.failed, "too wide: use width <= 100", field="size.width")
    if args.size.width == 13:
        raise RuntimeError("unlucky")
    row = f"{args.shape.value}:{args.size.width}x{args.size.height}:{args.label}"
    return DrawOutput(picture=[row] * args.repeat)


@pytest.fixture
def ctx(tmp_path: Path) -> SkillContext:
    return SkillContext.create(home=tmp_path, tracking_uri=str(tmp_path / "mlflow.db"))


@pytest.fixture
def registry() -> SkillRegistry:
    registry = SkillRegistry()
    registry.add(draw)
    return registry


def test_definition_comes_from_the_function(registry: SkillRegistry) -> None:
    tool = registry.get("draw").tooldef
    assert tool.name == "draw"
    assert tool.description == "Draw a shape, repeated.\n\nLonger explanation for the model."
    plain = tool.parameters["properties"]
    assert plain["shape"] == {"enum": ["circle", "square"], "type": "string", "description": "What to draw."}
    assert tool.parameters["required"] == ["shape", "size"]  # the plain form: optional fields optional
    props = tool.strict_parameters["properties"]
    assert props["shape"] == {"enum": ["circle", "square"], "type": "string", "description": "What to draw."}
    assert props["size"]["properties"]["width"]["description"] == "Width in cells."
    # strict form: every property required, optional ones nullable, defaults told in the description
    assert tool.strict is True
    assert tool.strict_parameters["required"] == ["shape", "size", "label", "repeat"]
    assert props["repeat"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]
    assert "default: 2" in props["repeat"]["description"]


def test_call_validates_runs_and_treats_null_as_default(registry: SkillRegistry, ctx: SkillContext) -> None:
    out = registry.call("draw", {"shape": "square", "size": {"width": 3, "height": None}, "label": None, "repeat": None}, ctx)
    assert out == DrawOutput(picture=["square:3x1:None", "square:3x1:None"])
    out = registry.call("draw", '{"shape": "circle", "size": {"width": 2}, "repeat": 1}', ctx)
    assert out.picture == ["circle:2x1:None"]


def test_bad_arguments_are_typed_errors_with_field_paths(registry: SkillRegistry, ctx: SkillContext) -> None:
    out = registry.call("draw", {"shape": "hexagon", "size": {"width": "wide"}}, ctx)
    assert isinstance(out, SkillError)
    assert out.error is ErrorCode.invalid_arguments
    assert out.field == "shape"
    assert any(d.startswith("size.width:") for d in out.details)
    assert "'circle' or 'square'" in out.message

    out = registry.call("draw", {"shape": "circle", "size": {"width": 1}, "colour": "red"}, ctx)
    assert (out.error, out.field) == (ErrorCode.invalid_arguments, "colour")


def test_bad_json_unknown_skill_failure_and_crash_are_results(registry: SkillRegistry, ctx: SkillContext) -> None:
    bad_json = registry.call("draw", '{"shape": ', ctx)
    assert bad_json.error is ErrorCode.invalid_json and "line 1" in bad_json.message
    not_object = registry.call("draw", "[1, 2]", ctx)
    assert not_object.error is ErrorCode.invalid_json and "list" in not_object.message
    unknown = registry.call("paint", {}, ctx)
    assert unknown.error is ErrorCode.unknown_skill and "draw" in unknown.message
    failure = registry.call("draw", {"shape": "circle", "size": {"width": 500}}, ctx)
    assert (failure.error, failure.field, failure.message) == (ErrorCode.failed, "size.width", "too wide: use width <= 100")
    crash = registry.call("draw", {"shape": "circle", "size": {"width": 13}}, ctx)
    assert crash.error is ErrorCode.internal and "RuntimeError: unlucky" in crash.message


def test_output_is_bounded(registry: SkillRegistry, tmp_path: Path) -> None:
    small = SkillContext.create(home=tmp_path, tracking_uri=str(tmp_path / "m.db"), max_output_bytes=1000)
    out = registry.call("draw", {"shape": "circle", "size": {"width": 1}, "label": "x" * 50, "repeat": 500}, small)
    assert out.truncated is True
    assert len(out.model_dump_json()) <= 1000
    assert out.truncation.startswith("picture: ") and "of 500 items cut" in out.truncation


def test_decorator_include_and_conflicts() -> None:
    mine = SkillRegistry()

    @mine.skill
    def propose(ctx: SkillContext, args: Size) -> DrawOutput:
        """Propose something."""
        return DrawOutput(picture=[])

    combined = SkillRegistry().include(builtin_registry()).include(mine)
    assert "propose" in combined and "submit_job" in combined
    assert len(combined) == len(builtin_registry()) + 1

    def submit_job(ctx: SkillContext, args: Size) -> DrawOutput:
        """Another skill with a taken name."""
        return DrawOutput(picture=[])

    with pytest.raises(ValueError, match="already registered"):
        combined.add(submit_job)


def test_registration_rejects_untyped_or_undocumented_functions() -> None:
    registry = SkillRegistry()

    def no_doc(ctx: SkillContext, args: Size) -> DrawOutput:
        return DrawOutput(picture=[])

    def untyped(ctx, args):  # type: ignore[no-untyped-def]
        """Untyped."""

    def plain_output(ctx: SkillContext, args: Size) -> dict:  # type: ignore[type-arg]
        """Returns a dict."""
        return {}

    with pytest.raises(TypeError, match="needs a docstring"):
        registry.add(no_doc)
    with pytest.raises(TypeError, match="SkillInput subclass"):
        registry.add(untyped)
    with pytest.raises(TypeError, match="SkillOutput subclass"):
        registry.add(plain_output)
