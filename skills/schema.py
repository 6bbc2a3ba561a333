"""JSON Schema of a skill's input, and its strict form (the one transformation, done once).

`input_schema` turns a pydantic model into a self-contained schema: `$ref`s inlined and
pydantic's auto-generated titles dropped, so every consumer sees the same small document.
`strict_schema` rewrites it to OpenAI's strict-mode subset: every property required,
optional ones as nullable unions, `additionalProperties: false` on every object, and
keywords strict mode rejects moved into descriptions. It returns None where the schema
cannot be made strict (free-form dicts), and the caller falls back to strict=False.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from pydantic import BaseModel

# Keywords OpenAI's strict mode accepts (structured outputs "supported schemas").
_STRICT_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const",
    "description", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
}  # fmt: skip
# Keywords that change what a schema accepts and that strict mode has no form for.
_SHAPE_KEYWORDS = {"allOf", "oneOf", "not", "patternProperties", "propertyNames", "if", "then", "else", "prefixItems"}
# Keywords strict mode rejects that say something a model should still read.
_DESCRIBED_KEYWORDS = {
    "default": "default",
    "minLength": "at least {} characters",
    "maxLength": "at most {} characters",
    "uniqueItems": "unique items",
}


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of `model`, self-contained and without titles."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})
    return _clean(_inline(schema, defs, ()))


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in seen:
            raise ValueError(f"input model {seen[0]!r} is recursive through {name!r}: skill inputs must not be recursive")
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        return _inline({**defs[name], **siblings}, defs, (*seen, name))
    return {key: _inline(value, defs, seen) for key, value in node.items()}


def _clean(node: Any, *, in_properties: bool = False) -> Any:
    """Drop pydantic's `title` keywords (but not properties named `title`)."""
    if isinstance(node, list):
        return [_clean(item) for item in node]
    if not isinstance(node, dict):
        return node
    if in_properties:
        return {key: _clean(value) for key, value in node.items()}
    return {
        key: _clean(value, in_properties=key == "properties")
        for key, value in node.items()
        if key != "title"
    }


def strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """`schema` rewritten to OpenAI's strict-mode subset, or None if it cannot be."""
    try:
        return _strict(copy.deepcopy(schema))
    except _NotStrict:
        return None


class _NotStrict(Exception):
    pass


def _strict(node: dict[str, Any]) -> dict[str, Any]:
    notes = []
    for keyword, phrase in _DESCRIBED_KEYWORDS.items():
        if keyword in node:
            value = node.pop(keyword)
            if keyword == "default":
                if value is not None:
                    notes.append(f"default: {json.dumps(value)}")
            elif keyword == "minLength" and value == 1:
                notes.append("non-empty")
            else:
                notes.append(phrase.format(value))
    unknown = set(node) - _STRICT_KEYWORDS
    if unknown & _SHAPE_KEYWORDS:
        raise _NotStrict(sorted(unknown & _SHAPE_KEYWORDS))
    for keyword in unknown:  # annotations strict mode rejects (examples, deprecated ...)
        node.pop(keyword)
    if notes:
        description = node.get("description", "")
        node["description"] = (f"{description} " if description else "") + f"({'; '.join(notes)})"
    if "anyOf" in node:
        node["anyOf"] = [_strict(variant) for variant in node["anyOf"]]
    if "items" in node:
        node["items"] = _strict(node["items"])
    if _is_object(node):
        if node.get("additionalProperties", False) is not False or "properties" not in node:
            raise _NotStrict("free-form object")
        required = set(node.get("required", []))
        properties = {}
        for name, prop in node["properties"].items():
            prop = _strict(prop)
            properties[name] = prop if name in required or _nullable(prop) else _make_nullable(prop)
        node["properties"] = properties
        node["required"] = list(properties)
        node["additionalProperties"] = False
    return node


def _is_object(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    return kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node


def _nullable(node: dict[str, Any]) -> bool:
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_nullable(variant) for variant in node.get("anyOf", []))


def _make_nullable(node: dict[str, Any]) -> dict[str, Any]:
    description = node.pop("description", None)
    union: dict[str, Any] = {"anyOf": [node, {"type": "null"}]}
    if description is not None:
        union["description"] = description
    return union
