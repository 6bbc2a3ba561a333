"""What common MCP clients send for non-string arguments, read once for every skill.

Clients that build arguments from text (the MCP Inspector CLI's `--tool-arg k=v`; before 2.x
it converted values only by a schema's top-level `type`, so nullable and `anyOf` fields
arrive as strings) send `"3"` for an integer, `'["a", "b"]'` for a list and `"null"` for
nothing. Where that is unambiguous, the string is read as the JSON value it spells:

- the field does not take a string, and the JSON the string holds is of a type it takes
  (`"3"` -> 3, `"2.5"` -> 2.5, `"true"` -> true, `'["a"]'` -> ["a"], `'{"k": 1}'` -> {"k": 1});
- the field does not take a string but takes null: `"null"` and `""` -> null;
- the field takes a list or a string (`argv`): a string holding a JSON list is that list.

Anything else stays as sent, and validation names the field as before.
"""

from __future__ import annotations

import json
from typing import Any

_JSON_TYPES: dict[type, tuple[str, ...]] = {
    bool: ("boolean",), int: ("integer", "number"), float: ("number",), str: ("string",),
    list: ("array",), dict: ("object",), type(None): ("null",),
}  # fmt: skip


def read_client_strings(schema: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """`arguments` with each top-level string read as the JSON value it spells where the
    field's schema (a property of the skill's input `schema`) makes that unambiguous."""
    properties = schema.get("properties", {})
    read = dict(arguments)
    for key, value in arguments.items():
        if isinstance(value, str) and key in properties:
            read[key] = _read(value, accepted_types(properties[key]))
    return read


def accepted_types(schema: dict[str, Any]) -> set[str]:
    """The JSON types a (self-contained) schema accepts; empty when it does not say (any value)."""
    kind = schema.get("type")
    types = {kind} if isinstance(kind, str) else set(kind or ())
    for keyword in ("anyOf", "oneOf"):
        for variant in schema.get(keyword, ()):
            variant_types = accepted_types(variant)
            if not variant_types:
                return set()
            types |= variant_types
    values = [*schema.get("enum", ()), *([schema["const"]] if "const" in schema else [])]
    for value in values:
        types.update(_JSON_TYPES.get(type(value), ()))
    return types


def _read(value: str, types: set[str]) -> Any:
    if not types:
        return value
    if "string" not in types and "null" in types and value.strip() in ("", "null"):
        return None
    if "string" in types and "array" not in types:
        return value
    try:
        decoded = json.loads(value)
    except (ValueError, RecursionError):
        return value
    if "string" in types and not isinstance(decoded, list):
        return value
    return decoded if set(_JSON_TYPES.get(type(decoded), ())) & types else value
