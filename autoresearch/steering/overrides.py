"""Steering overrides: the search space, budget and priority people set from chat.

They live in the campaign's `steering.json` (`CampaignPaths.overrides`), written by the runner when it applies a chat
message, and are laid over the config every time the runner starts (so `autoresearch run
campaign.yaml` or `resume` keeps them). Each change is a pure function of the current
campaign: it validates (type rules, bounds, budget fields) and says exactly what changed,
`before -> after`. Chat calls the same functions to check a command before posting it.

Delete `steering.json` to go back to the config's values.
"""

from __future__ import annotations

import math
import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from autoresearch.campaign import Budget, Campaign, CampaignPaths, CategoricalParam, FloatParam, IntParam, ParamSpec
from compute.suggest import suggest_names
from compute.priority import parse_priority, priority_name

_BUDGET_KEYS = ("max_trials", "max_parallel", "max_gpu_hours", "deadline", "max_llm_usd")


class SteeringError(ValueError):
    """A steering change does not fit the campaign; the message says what and how to fix it."""


class Overrides(BaseModel):
    """What people changed from chat, laid over the campaign config."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    search_space: dict[str, ParamSpec] = Field(default_factory=dict)
    """Parameter -> its replacement spec (same name, same type as in the config)."""
    budget: dict[str, Any] = Field(default_factory=dict)
    """Budget fields and their new values (JSON form)."""
    priority: int | None = None
    """compute.priority of the campaign's jobs (0-100)."""


def load_overrides(paths: CampaignPaths) -> Overrides:
    """The overrides stored in a campaign folder (none when the file is absent)."""
    path = paths.overrides
    if not os.path.lexists(path):
        return Overrides()
    try:
        return Overrides.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"]
    except OSError as exc:  # a folder, a dangling link, no permission
        problem = exc.strerror or str(exc)
    raise SteeringError(f"{path} is not a valid steering file ({problem}): it holds the search space, budget and "
                        "priority changes made from chat, as JSON. Move it away to drop those changes (the "
                        "config's values apply again), or restore it from a backup") from None  # fmt: skip


def save_overrides(paths: CampaignPaths, overrides: Overrides) -> None:
    """Write atomically (a reader never sees half a file)."""
    path = paths.overrides
    tmp = path.with_suffix(".tmp")
    tmp.write_text(overrides.model_dump_json(indent=2))
    os.replace(tmp, path)


def record(overrides: Overrides, before: Campaign, after: Campaign) -> Overrides:
    """`overrides` plus whatever differs between `before` and `after`."""
    space = {**overrides.search_space}
    space.update({k: v for k, v in after.search_space.items() if before.search_space.get(k) != v})
    budget = {**overrides.budget}
    for key in _BUDGET_KEYS:
        new = getattr(after.budget, key)
        if new != getattr(before.budget, key):
            budget[key] = after.budget.model_dump(mode="json")[key]
    priority = after.compute.priority if after.compute.priority != before.compute.priority else overrides.priority
    return Overrides(search_space=space, budget=budget, priority=priority)


def effective_campaign(campaign: Campaign, overrides: Overrides) -> Campaign:
    """The campaign with the overrides laid over it (overrides of parameters it lacks are ignored)."""
    space = {k: overrides.search_space.get(k, spec) for k, spec in campaign.search_space.items()}
    data = campaign.model_dump(mode="json")
    data["search_space"] = {k: v.model_dump(mode="json") for k, v in space.items()}
    data["budget"] = {**data["budget"], **overrides.budget}
    if overrides.priority is not None:
        data["compute"] = {**data["compute"], "priority": overrides.priority}
    return _validate(data)


def _validate(data: dict[str, Any]) -> Campaign:
    try:
        return Campaign.model_validate(data, context={"check_paths": False})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SteeringError(f"{where}: {first['msg']}") from None


# --- changes -----------------------------------------------------------------------------


def describe_spec(spec: FloatParam | IntParam | CategoricalParam) -> str:
    """`float [0.0001, 0.01] log`, `int [32, 256] step 32`, `categorical [relu, tanh]`."""
    if isinstance(spec, CategoricalParam):
        return f"categorical [{', '.join(str(c) for c in spec.choices)}]"
    text = f"{spec.type} [{spec.low:g}, {spec.high:g}]"
    if spec.log:
        text += " log"
    if spec.step not in (None, 1):
        text += f" step {spec.step:g}"
    return text


_SPEC = TypeAdapter(ParamSpec)


def change_space(campaign: Campaign, changes: dict[str, Any]) -> tuple[Campaign, list[str]]:
    """Replace parameters' ranges or choices. `changes`: name -> a full spec (dict) or a
    shorthand: `[low, high]` for float/int, a list of choices (or one choice) for categorical."""
    if not changes:
        raise SteeringError("no parameter given: write /space name=low..high or name=a,b,c")
    space = dict(campaign.search_space)
    lines = []
    for name, value in changes.items():
        old = space.get(name)
        if old is None:
            known = ", ".join(space) or "none"
            raise SteeringError(f"{name} is not in the search space{suggest_names(name, space)}; parameters: {known}")
        new = _spec_of(name, old, value)
        if new != old:
            lines.append(f"search_space.{name}: {describe_spec(old)} -> {describe_spec(new)}")
        space[name] = new
    data = campaign.model_dump(mode="json")
    data["search_space"] = {k: v.model_dump(mode="json") for k, v in space.items()}
    return _validate(data), lines


def _spec_of(name: str, old: FloatParam | IntParam | CategoricalParam, value: Any) -> Any:
    if isinstance(value, dict):
        raw = {"type": old.type, **value}
    elif isinstance(old, CategoricalParam):  # one value is one choice (`/space act=relu`)
        raw = {"type": "categorical", "choices": value if isinstance(value, list) else [value]}
    else:
        if not (isinstance(value, list) and len(value) == 2):
            raise SteeringError(f"{name} is a {old.type} parameter: give a range, e.g. {name}={old.low}..{old.high}")
        low, high = value
        raw = {**old.model_dump(), "low": low, "high": high}
        if old.type == "float" and old.step is not None and not _multiple(high - low, old.step):
            raw["step"] = None
    if raw["type"] != old.type:
        raise SteeringError(f"{name} is a {old.type} parameter in the config; it cannot become {raw['type']}")
    try:
        return _SPEC.validate_python(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        detail = first.get("ctx", {}).get("detail") or first["msg"]
        raise SteeringError(f"search_space.{name}: {detail}") from None


def _multiple(span: float, step: float) -> bool:
    ratio = span / step
    return math.isclose(ratio, round(ratio), abs_tol=1e-9)


def change_budget(campaign: Campaign, changes: dict[str, Any]) -> tuple[Campaign, list[str]]:
    """Set budget fields (max_trials, max_parallel, max_gpu_hours, deadline, max_llm_usd)."""
    if not changes:
        raise SteeringError(f"no budget field given: write /budget max_trials=80 (fields: {', '.join(_BUDGET_KEYS)})")
    for key in changes:
        if key not in _BUDGET_KEYS:
            raise SteeringError(f"budget has no field {key!r}{suggest_names(key, _BUDGET_KEYS)}; "
                                f"fields: {', '.join(_BUDGET_KEYS)}")  # fmt: skip
    data = campaign.model_dump(mode="json")
    data["budget"] = {**data["budget"], **changes}
    try:
        Budget.model_validate(data["budget"])
    except ValidationError as exc:
        first = exc.errors()[0]
        raise SteeringError(f"budget.{'.'.join(str(p) for p in first['loc'])}: {first['msg']}") from None
    updated = _validate(data)
    lines = [
        f"budget.{key}: {_show(getattr(campaign.budget, key))} -> {_show(getattr(updated.budget, key))}"
        for key in changes
        if getattr(campaign.budget, key) != getattr(updated.budget, key)
    ]
    return updated, lines


def change_priority(campaign: Campaign, value: int | str) -> tuple[Campaign, list[str]]:
    """Set compute.priority (0-100 or idle/low/normal/high/urgent)."""
    try:
        priority = parse_priority(value)
    except (ValueError, TypeError) as exc:
        raise SteeringError(f"priority {value!r}: {exc}") from None
    old = campaign.compute.priority
    updated = campaign.model_copy(update={"compute": campaign.compute.model_copy(update={"priority": priority})})
    lines = [f"compute.priority: {_priority(old)} -> {_priority(priority)}"] if priority != old else []
    return updated, lines


def _priority(value: int) -> str:
    name = priority_name(value)
    return f"{value} ({name})"


def _show(value: Any) -> str:
    return "none" if value is None else str(value)
