"""Search-space parameters: float, int and categorical, and how each maps onto Optuna."""

from __future__ import annotations

import enum
import math
import types
import typing
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from compute.suggest import suggest_names

if TYPE_CHECKING:  # Optuna is imported by `distribution()` only: reading a config does not need it
    import optuna

Choice = str | int | float | bool | None


def located(at: tuple[str | int, ...], message: str) -> PydanticCustomError:
    """A validation error that names the key it is about, relative to the model raising it.

    The loader appends `at` to the error's location to point at the right line.
    """
    return PydanticCustomError("campaign_config", "{detail}", {"detail": message, "at": at})


def _leaf_types(annotation: Any) -> set[Any]:
    """The plain types an annotation accepts (Annotated and Optional/Union unwrapped)."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _leaf_types(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_leaf_types(arg) for arg in typing.get_args(annotation)))
    return {annotation}


def exact_scalars(model: type[BaseModel], data: Any, named: frozenset[str] = frozenset()) -> Any:
    """`data` unchanged, or the error (naming the key) for a value pydantic would silently coerce:
    a string or a boolean for a number (`max_trials: "5"`, `gpus: true`), or anything but a
    boolean for a boolean. `named`: number fields that also take names (priority: high)."""
    if not isinstance(data, Mapping):
        return data
    for key, value in data.items():
        field = model.model_fields.get(key) if isinstance(key, str) else None
        if field is None or value is None:
            continue
        kinds = _leaf_types(field.annotation)
        if any(isinstance(k, type) and issubclass(k, (str, enum.Enum)) for k in kinds) or Any in kinds:
            continue
        numeric = bool(kinds & {int, float})
        if kinds == {bool} and not isinstance(value, bool):
            raise located((key,), f"must be true or false, not {value!r}")
        if numeric and isinstance(value, bool):
            raise located((key,), f"must be a number, not the boolean {str(value).lower()}")
        if numeric and isinstance(value, str) and key not in named and _numeric_text(value):
            raise located((key,), f"must be a number, not the string {value!r}; write it without quotes")
    return data


def _numeric_text(text: str) -> bool:
    """Whether pydantic would read `text` as a number (other strings get its own error)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


class _Param(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)

    @model_validator(mode="before")
    @classmethod
    def _exact(cls, data: Any) -> Any:
        return exact_scalars(cls, data)


class FloatParam(_Param):
    """A real number in [low, high]."""

    type: Literal["float"]
    low: float
    """Smallest value."""
    high: float
    """Largest value; must be greater than low."""
    log: bool = False
    """Sample on a log scale (needs low > 0)."""
    step: Annotated[float | None, Field(gt=0)] = None
    """Discretization step (not with log)."""

    @model_validator(mode="after")
    def _bounds(self) -> FloatParam:
        _check_bounds(self.low, self.high, self.log)
        if self.log and self.step is not None:
            raise located(("step",), "step cannot be combined with log: true (Optuna samples either one)")
        _check_step(self.step, self.low, self.high)
        return self

    def distribution(self) -> optuna.distributions.BaseDistribution:
        from optuna import distributions

        return distributions.FloatDistribution(self.low, self.high, log=self.log, step=self.step)

    def suggest(self, trial: optuna.Trial, name: str) -> float:
        return trial.suggest_float(name, self.low, self.high, log=self.log, step=self.step)

    def check(self, value: Any) -> float:
        """`value` as a float, or ValueError saying why it does not fit."""
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"{value!r} is not a finite number")
        if not self.low <= value <= self.high:
            raise ValueError(f"{value!r} is outside [{self.low}, {self.high}]")
        return float(value)


INT_LIMIT = 2**53
"""An int parameter's bounds lie within +-2**53: Optuna stores parameters as floats, exact up to there."""


class IntParam(_Param):
    """An integer in [low, high]."""

    type: Literal["int"]
    low: int
    """Smallest value."""
    high: int
    """Largest value; must be greater than low."""
    log: bool = False
    """Sample on a log scale (needs low > 0)."""
    step: Annotated[int, Field(ge=1)] = 1
    """Spacing of the values (must be 1 with log)."""

    @model_validator(mode="before")
    @classmethod
    def _whole_numbers(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        for key in ("low", "high", "step"):
            value = data.get(key)
            if isinstance(value, float):
                raise located((key,), f"must be an integer, not the float {value!r}: an int parameter's {key} is a "
                                       f"whole number (write it without a decimal point or exponent), or use type: float")
            if isinstance(value, int) and not isinstance(value, bool) and abs(value) > INT_LIMIT:
                raise located((key,), f"{value} is too large: an int parameter's bounds must lie within +-2**53 "
                                       f"({INT_LIMIT}); narrow the range, or use type: float with log: true")
        return data

    @model_validator(mode="after")
    def _bounds(self) -> IntParam:
        _check_bounds(self.low, self.high, self.log)
        if self.log and self.step != 1:
            raise located(("step",), "step must be 1 with log: true (Optuna samples either one)")
        _check_step(self.step, self.low, self.high)
        return self

    def distribution(self) -> optuna.distributions.BaseDistribution:
        from optuna import distributions

        return distributions.IntDistribution(self.low, self.high, log=self.log, step=self.step)

    def suggest(self, trial: optuna.Trial, name: str) -> int:
        return trial.suggest_int(name, self.low, self.high, log=self.log, step=self.step)

    def check(self, value: Any) -> int:
        """`value` as an int, or ValueError saying why it does not fit."""
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{value!r} is not an integer")
        if not self.low <= value <= self.high or (value - self.low) % self.step:
            raise ValueError(f"{value!r} is not in range({self.low}, {self.high} + 1, {self.step})")
        return value


class CategoricalParam(_Param):
    """One of a list of choices."""

    type: Literal["categorical"]
    choices: Annotated[list[Choice], Field(min_length=1)]
    """The values to choose from (strings, numbers, booleans); at least one, no repeats."""

    @model_validator(mode="after")
    def _unique(self) -> CategoricalParam:
        seen: list[Choice] = []
        for i, choice in enumerate(self.choices):
            if any(choice == s and type(choice) is type(s) for s in seen):
                raise located(("choices", i), f"choice {choice!r} appears twice")
            seen.append(choice)
        return self

    def distribution(self) -> optuna.distributions.BaseDistribution:
        from optuna import distributions

        return distributions.CategoricalDistribution(self.choices)

    def suggest(self, trial: optuna.Trial, name: str) -> Choice:
        return trial.suggest_categorical(name, self.choices)

    def check(self, value: Any) -> Choice:
        """`value` if it is one of the choices, else ValueError."""
        for choice in self.choices:
            if value == choice and type(value) is type(choice):
                return choice
        raise ValueError(f"{value!r} is not one of {self.choices}")


def _check_step(step: float | None, low: float, high: float) -> None:
    if step is not None and step > high - low:
        raise located(
            ("step",), f"step ({step}) is wider than the range [{low}, {high}]; use a step of at most {high - low}"
        )


def _check_bounds(low: float, high: float, log: bool) -> None:
    if not math.isfinite(low) or not math.isfinite(high):
        raise located(("low",), "low and high must be finite numbers")
    if low >= high:
        raise located(("high",), f"high ({high}) must be greater than low ({low})")
    if not math.isfinite(float(high) - float(low)):
        raise located(("high",), f"the range [{low}, {high}] is too wide to sample (high - low overflows); "
                                 "narrow it, or use log: true with a positive low")
    if log and low <= 0:
        raise located(("low",), f"log: true needs low > 0 (got {low}); use a positive low or drop log")


def check_params(
    space: Mapping[str, FloatParam | IntParam | CategoricalParam], params: Mapping[str, Any]
) -> dict[str, Any]:
    """`params` checked against the search space (every parameter, in range), in space order.

    Raises ValueError listing every problem, naming each parameter.
    """
    problems: list[str] = []
    checked: dict[str, Any] = {}
    for name, spec in space.items():
        if name not in params:
            problems.append(f"{name} is missing")
            continue
        try:
            checked[name] = spec.check(params[name])
        except ValueError as exc:
            problems.append(f"{name}={exc}")
    for name in params:
        if name not in space:
            problems.append(f"{name} is not in the search space{suggest_names(name, space)}")
    if problems:
        raise ValueError(f"proposal parameters do not fit the search space: {'; '.join(problems)}")
    return checked
