"""Skills declared once as typed functions, kept in a registry, called with JSON arguments.

A skill is a plain function::

    def job_status(ctx: SkillContext, args: JobStatusInput) -> JobStatusOutput:
        \"\"\"Show one job: state, attempts, exit code, why it failed.\"\"\"

The input model (a `SkillInput`) gives the JSON Schema, the output model (a `SkillOutput`)
the result, the docstring the description. Every consumer (OpenAI and Anthropic tool
lists, the MCP server, the CLI) is generated from the `ToolDef` the registry builds, and
every call goes through `SkillRegistry.call`, which reads what clients send as strings
(skills/arguments.py), validates, runs, maps failures to a typed `SkillError` and applies the
output bound.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from pydantic import BaseModel, ValidationError

from skills.arguments import read_client_strings
from compute.suggest import suggest_names
from skills.bounds import bound_output
from skills.context import SkillContext
from skills.models import ErrorCode, SkillError, SkillFailure, SkillInput, SkillOutput
from skills.schema import input_schema, strict_schema
from skills.tooldef import ToolDef, ToolHints

SkillFn = Callable[[SkillContext, Any], SkillOutput]


@dataclass(frozen=True)
class Skill:
    """One registered skill: the function and what was read from its signature."""

    name: str
    description: str
    fn: SkillFn
    input_model: type[SkillInput]
    output_model: type[SkillOutput]
    hints: ToolHints = ToolHints()

    @classmethod
    def from_function(cls, fn: SkillFn, name: str | None = None, hints: ToolHints | None = None) -> Skill:
        """Read the input model, output model and description from `fn`'s signature."""
        label = getattr(fn, "__qualname__", repr(fn))
        types = typing.get_type_hints(fn)
        params = list(inspect.signature(fn).parameters)
        if len(params) != 2:
            raise TypeError(f"skill {label} must take (ctx: SkillContext, args: <SkillInput model>), not {params}")
        input_model, output_model = types.get(params[1]), types.get("return")
        if not (inspect.isclass(input_model) and issubclass(input_model, SkillInput)):
            raise TypeError(f"skill {label}: annotate its second parameter with a SkillInput subclass")
        if not (inspect.isclass(output_model) and issubclass(output_model, SkillOutput)):
            raise TypeError(f"skill {label}: annotate its return with a SkillOutput subclass")
        description = inspect.cleandoc(fn.__doc__ or "")
        if not description:
            raise TypeError(f"skill {label} needs a docstring: it is the description models read")
        return cls(name or fn.__name__, description, fn, input_model, output_model, hints or ToolHints())

    @cached_property
    def tooldef(self) -> ToolDef:
        """The provider-neutral definition: the plain schema, and the strict form when one exists."""
        schema = input_schema(self.input_model)
        return ToolDef(
            name=self.name,
            description=self.description,
            parameters=schema,
            strict_parameters=strict_schema(schema),
            hints=self.hints,
        )


class SkillRegistry:
    """Named skills. Packages build their own registry or `include` others' skills."""

    def __init__(self, skills: list[Skill] | None = None) -> None:
        self._skills: dict[str, Skill] = {}
        for skill in skills or []:
            self._put(skill)

    def skill(self, fn: SkillFn) -> SkillFn:
        """Decorator: register `fn` as a skill and return it unchanged."""
        self.add(fn)
        return fn

    def add(self, fn: SkillFn, name: str | None = None, hints: ToolHints | None = None) -> Skill:
        """Register `fn` as a skill named `name` (default: the function's name); `hints` say
        whether it reads, changes or stops work (default: may change and stop work)."""
        skill = Skill.from_function(fn, name, hints)
        self._put(skill)
        return skill

    def include(self, other: SkillRegistry) -> SkillRegistry:
        """Add every skill of `other` to this registry; returns self."""
        for skill in other:
            self._put(skill)
        return self

    def _put(self, skill: Skill) -> None:
        if skill.name in self._skills and self._skills[skill.name].fn is not skill.fn:
            raise ValueError(f"a different skill named {skill.name!r} is already registered")
        self._skills[skill.name] = skill

    def __iter__(self) -> Iterator[Skill]:
        return iter(self._skills.values())

    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, name: object) -> bool:
        return name in self._skills

    def get(self, name: str) -> Skill | None:
        return self._skills.get(name)

    def names(self) -> list[str]:
        return list(self._skills)

    def tooldefs(self) -> list[ToolDef]:
        return [skill.tooldef for skill in self]

    def call(self, name: str, arguments: dict[str, Any] | str | None, ctx: SkillContext) -> SkillOutput:
        """Run skill `name` on `arguments` (a dict or a JSON string).

        Never raises for bad input or failed work: returns the skill's output model or a
        `SkillError`, bounded to `ctx.max_output_bytes`.
        """
        return bound_output(self._call(name, arguments, ctx), ctx.max_output_bytes)

    def _call(self, name: str, arguments: dict[str, Any] | str | None, ctx: SkillContext) -> SkillOutput:
        skill = self._skills.get(name)
        if skill is None:
            known = ", ".join(self._skills) or "none"
            return SkillError(
                error=ErrorCode.unknown_skill,
                skill=name,
                message=f"no skill {name!r}. Skills: {known}",
            )
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except RecursionError:
                return _too_deep(name)
            except json.JSONDecodeError as exc:
                return SkillError(
                    error=ErrorCode.invalid_json,
                    skill=name,
                    message=f"arguments are not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}): "
                    f"pass one JSON object, e.g. '{{}}'",
                )
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return SkillError(
                error=ErrorCode.invalid_json,
                skill=name,
                message=f"arguments must be a JSON object, not {type(arguments).__name__}",
            )
        arguments = read_client_strings(skill.tooldef.parameters, arguments)
        if _depth(arguments) > MAX_ARGUMENT_DEPTH:
            return _too_deep(name)
        try:
            # JSON mode, strict: once a client's strings are read (skills/arguments.py: "5" for an
            # integer field), a wrong type such as a bool for an integer is refused with the field
            # named, never coerced; enum values and dates still parse.
            args = skill.input_model.model_validate_json(json.dumps(arguments), strict=True)
        except (TypeError, ValueError) as exc:
            if isinstance(exc, ValidationError):
                return validation_error(name, exc, skill.input_model)
            return SkillError(error=ErrorCode.invalid_json, skill=name,
                              message=f"arguments are not JSON data ({exc}): pass one JSON object")
        try:
            output = skill.fn(ctx, args)
        except SkillFailure as failure:
            return SkillError(error=failure.error, skill=name, message=failure.message, field=failure.field)
        except ValidationError as exc:  # a model built inside the skill from the arguments
            return validation_error(name, exc)
        except Exception as exc:  # noqa: BLE001 - errors are results, not tracebacks
            return SkillError(
                error=ErrorCode.internal,
                skill=name,
                message=f"skill {name} failed with {type(exc).__name__}: {exc}",
            )
        return output


def _fields_at(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    """The fields of the object that holds the key at `loc` (within `model`); [] when unknown."""
    current: Any = model
    for part in loc[:-1]:
        if isinstance(part, int):
            continue
        field = current.model_fields.get(part)
        current = _model_in(field.annotation) if field is not None else None
        if current is None:
            return []
    return list(current.model_fields)


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside `list[X]`, `X | None`, `Annotated[X, ...]`, or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for arg in typing.get_args(annotation) if (m := _model_in(arg)) is not None), None)


MAX_ARGUMENT_DEPTH = 32
"""Deepest nesting of objects and arrays accepted in a skill's arguments."""


def _depth(value: Any) -> int:
    """How deeply `value` nests lists and dicts (iterative: safe on any depth)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            deepest = max(deepest, level)
            if level > MAX_ARGUMENT_DEPTH:
                return level
            stack.extend((child, level + 1) for child in node)
    return deepest


def _too_deep(skill: str) -> SkillError:
    return SkillError(
        error=ErrorCode.invalid_json,
        skill=skill,
        message=f"arguments nest objects or arrays more than {MAX_ARGUMENT_DEPTH} levels deep: no skill input "
        "is that deep; pass one flat JSON object as `autoresearch skills list --json` shows",
    )


def validation_error(skill: str, exc: ValidationError, model: type[BaseModel] | None = None) -> SkillError:
    """A `SkillError` naming every bad field of a pydantic validation error; an unknown field of
    `model` (the skill's input) with the closest known one and the fields there are."""
    details = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(part) for part in err["loc"]) or "(arguments)"
        fields = _fields_at(model, err["loc"]) if model is not None and err["type"] == "extra_forbidden" else []
        if fields:
            unknown = str(err["loc"][-1])
            details.append(f"{where}: unknown field{suggest_names(unknown, fields)}; the fields are {', '.join(fields)}")
        else:
            details.append(f"{where}: {err['msg']}")
    first = exc.errors(include_url=False)[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    return SkillError(
        error=ErrorCode.invalid_arguments,
        skill=skill,
        field=field,
        details=details,
        message=f"invalid arguments for {skill}: {'; '.join(details)}. "
        f"`autoresearch skills list --json` (or the tool schema) shows the expected fields",
    )
