"""Reading `campaign.yaml`: YAML with line numbers kept, errors that point at the line.

Scalars follow YAML 1.2 (`06:00` stays a string, `1e-4` is a float, only true/false are
booleans), not PyYAML's YAML 1.1 defaults.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from autoresearch.campaign.config import Campaign
from compute.suggest import suggest_names

Loc = tuple[str | int, ...]

_BOOL, _INT, _FLOAT = "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
MAX_CONFIG_BYTES = 1 << 20
"""A campaign config is a few KiB; anything over 1 MiB is refused before it is read."""
MAX_DEPTH = 50
"""Mappings and lists nested deeper than this are refused (no config needs more than ~6)."""
MAX_NODES = 100_000
"""Values in the document with every alias expanded; more is refused (billion laughs)."""


class _Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema booleans, ints and floats, and a nesting cap."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_DEPTH} levels deep; flatten the file", mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (_BOOL, _INT, _FLOAT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(_BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_Loader.add_implicit_resolver(
    _INT, re.compile(r"^(?:[-+]?(?:0|[1-9][0-9_]*)|0o[0-7]+|0x[0-9a-fA-F]+)$"), list("-+0123456789")
)
_Loader.add_implicit_resolver(
    _FLOAT,
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)


class ConfigProblem(BaseModel):
    """One thing wrong in a config file."""

    model_config = ConfigDict(frozen=True)

    file: str
    """The config file."""
    line: int | None
    """1-based line of the offending key (or of its closest parent that exists)."""
    column: int | None
    """1-based column of that key."""
    path: str
    """Field path, like `search_space.lr.high` or `command[2]`."""
    message: str
    """What is wrong and what was expected."""

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}:{self.column}"
        return f"{where}: {self.path}: {self.message}" if self.path else f"{where}: {self.message}"


class ConfigError(Exception):
    """A campaign config that cannot be used; `str()` is one paragraph for the CLI (exit 2)."""

    def __init__(self, file: str | Path, problems: list[ConfigProblem]) -> None:
        self.file = str(file)
        self.problems = problems
        listed = "; ".join(str(p) for p in problems)
        super().__init__(
            f"invalid campaign config {self.file}: {listed}. Fix the file and check it with "
            f"`autoresearch config check {self.file}` (`autoresearch config schema` prints every key)."
        )


def load_campaign(path: str | Path, *, check_paths: bool = True) -> Campaign:
    """Read and validate a campaign YAML file. `cwd` and other paths resolve against its folder.

    Raises ConfigError naming the file, line, column and field path of each problem.
    """
    file = Path(path)
    data, marks = _read_yaml(file)
    try:
        return Campaign.model_validate(
            data, context={"base_dir": file.resolve().parent, "check_paths": check_paths}
        )
    except ValidationError as exc:
        problems = [_problem(file, err, marks) for err in _drop_shadowed(exc.errors())]
        raise ConfigError(file, sorted(problems, key=lambda p: (p.line or 0, p.column or 0))) from None


def _drop_shadowed(errors: list[Any]) -> list[Any]:
    """Drop `missing key x` when the same mapping has a misspelled key close to `x`: one problem, not two."""
    missing = {tuple(e["loc"]) for e in errors if e["type"] == "missing"}
    shadowed: set[tuple[object, ...]] = set()
    for err in errors:
        if err["type"] == "extra_forbidden":
            parent, key = tuple(err["loc"][:-1]), str(err["loc"][-1])
            siblings = [str(m[-1]) for m in missing if m[:-1] == parent]
            shadowed.update(parent + (c,) for c in difflib.get_close_matches(key, siblings, n=1, cutoff=0.6))
    return [e for e in errors if not (e["type"] == "missing" and tuple(e["loc"]) in shadowed)]


@dataclass(frozen=True)
class _Mark:
    line: int
    column: int


def _read_yaml(file: Path) -> tuple[Any, dict[Loc, _Mark]]:
    def whole(message: str, line: int | None = None, column: int | None = None) -> ConfigError:
        problem = ConfigProblem(file=str(file), line=line, column=column, path="", message=message)
        return ConfigError(file, [problem])

    text = _read_text(file, whole)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        marks: dict[Loc, _Mark] = {}
        duplicates: list[ConfigProblem] = []
        if node is not None:
            _walk(node, (), marks, duplicates, file, [0])
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (None, None)
        raise whole(f"not valid YAML: {exc.problem or exc.context}", line, column) from None
    except yaml.YAMLError as exc:
        raise whole(f"not valid YAML: {exc}") from None
    finally:
        loader.dispose()
    if duplicates:
        raise ConfigError(file, duplicates)
    if not isinstance(data, dict):
        raise whole("the file must be a YAML mapping with name, command, objective, search_space, budget ...")
    return data, marks


def _read_text(file: Path, whole: Any) -> str:
    """The file's text: a regular file (links followed) of at most MAX_CONFIG_BYTES, UTF-8."""
    try:
        info = file.stat()
    except FileNotFoundError:
        raise whole("file not found; give the path of a campaign YAML file") from None
    except OSError as exc:  # a symlink loop (ELOOP), a path through a file (ENOTDIR) ...
        raise whole(f"cannot open it: {exc.strerror or exc}; give the path of a regular YAML file") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a device, FIFO or socket)"
        raise whole(f"it is {kind}; give the path of a campaign YAML file")
    if info.st_size > MAX_CONFIG_BYTES:
        raise whole(f"it is {info.st_size} bytes, over the {MAX_CONFIG_BYTES}-byte limit for a campaign config")
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # swapped since the stat
                raise whole("it is not a regular file; give the path of a campaign YAML file")
            data = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise whole(f"cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise whole(f"it is over the {MAX_CONFIG_BYTES}-byte limit for a campaign config")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise whole(f"cannot read it as a UTF-8 text file (byte {exc.start} is not UTF-8)") from None


def _walk(
    node: yaml.Node, loc: Loc, marks: dict[Loc, _Mark], dups: list[ConfigProblem], file: Path, seen_nodes: list[int]
) -> None:
    seen_nodes[0] += 1
    if seen_nodes[0] > MAX_NODES or len(loc) > MAX_DEPTH:
        mark = node.start_mark
        raise yaml.composer.ComposerError(
            None, None, f"it expands to more than {MAX_NODES} values or {MAX_DEPTH} levels (through aliases?); "
            "write the values out instead of nesting aliases", mark,
        )
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.value)
            mark = _Mark(key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if key in seen:
                dups.append(ConfigProblem(
                    file=str(file), line=mark.line, column=mark.column, path=_dotted(loc + (key,)),
                    message=f"key {key!r} appears twice (first on line {seen[key]}); keep one",
                ))
            seen[key] = mark.line
            marks[loc + (key,)] = mark
            _walk(value_node, loc + (key,), marks, dups, file, seen_nodes)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            marks[loc + (i,)] = _Mark(item.start_mark.line + 1, item.start_mark.column + 1)
            _walk(item, loc + (i,), marks, dups, file, seen_nodes)


def _problem(file: Path, err: Any, marks: dict[Loc, _Mark]) -> ConfigProblem:
    ctx = err.get("ctx") or {}
    loc = tuple(err["loc"]) + tuple(ctx.get("at", ()))
    path, parent = _user_path(loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        allowed = list(parent.model_fields) if parent else []
        message = f"unknown key {path[-1]!r}{suggest_names(str(path[-1]), allowed)}"
        if allowed:
            message += f"; allowed here: {', '.join(allowed)}"
    elif kind == "missing":
        message = f"missing required key {path[-1]!r}"
    elif kind == "union_tag_invalid":
        tags = [t.strip(" '") for t in str(ctx.get("expected_tags", "")).split(",")]
        message = f"{err['msg']}{suggest_names(str(ctx.get('tag')), tags)}"
        path = path + ["type"]
    elif kind == "union_tag_not_found":
        message = "needs `type:` float, int or categorical"
    elif kind == "campaign_config":
        message = err["msg"]
    else:
        message = f"{err['msg'].removeprefix('Value error, ')} (got {_short(err.get('input'))})"
    line = column = None
    for end in range(len(path), -1, -1):
        mark = marks.get(tuple(path[:end]))
        if mark:
            line, column = mark.line, mark.column
            break
    return ConfigProblem(file=str(file), line=line, column=column, path=_dotted(path), message=message)


def _user_path(loc: Loc) -> tuple[list[str | int], type[BaseModel] | None]:
    """The YAML path of a pydantic error location (union tags dropped) and the model holding its last key."""
    path: list[str | int] = []
    current: Any = Campaign
    parent: type[BaseModel] | None = None
    for part in loc:
        current = _unwrap(current)
        if typing.get_origin(current) in (typing.Union, types.UnionType):
            member = _union_member(current, part)
            if member is not None:
                current = member
                continue
        parent = current if isinstance(current, type) and issubclass(current, BaseModel) else None
        path.append(part)
        if parent is not None:
            field = parent.model_fields.get(str(part))
            current = field.annotation if field else None
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]
        elif typing.get_origin(current) is list:
            current = typing.get_args(current)[0]
        else:
            current = None
    return path, parent


def _unwrap(tp: Any) -> Any:
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        members = [m for m in typing.get_args(tp) if m is not type(None)]
        if len(members) == 1:
            return _unwrap(members[0])
    return tp


def _union_member(union: Any, tag: str | int) -> Any:
    for member in typing.get_args(union):
        member = _unwrap(member)
        if isinstance(member, type) and issubclass(member, BaseModel) and "type" in member.model_fields:
            if tag in typing.get_args(member.model_fields["type"].annotation):
                return member
        elif getattr(member, "__name__", None) == tag:
            return member
    return None


def _dotted(path: Loc | list[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
