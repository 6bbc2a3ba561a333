"""Dependencies a user can install beside their own: pyproject.toml declares compatible ranges (a
lower bound, never an exact pin), constraints.txt pins one tested version of each inside its range
(what CI and the quick start install), and constraints-lowest.txt holds the lower bounds that CI's
lowest-versions pass (.ci/lowest) installs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
# The lowest-versions pass installs the product and `dev`, and needs no linters.
NOT_IN_LOWEST_PASS = {"ruff", "mypy"}


def _requirements(*extras: str) -> list[Requirement]:
    lines = list(PROJECT["dependencies"]) if not extras or "" in extras else []
    for extra in extras:
        lines += PROJECT["optional-dependencies"].get(extra, [])
    return [Requirement(line) for line in lines]


def _pins(name: str) -> dict[str, str]:
    pins = {}
    for number, line in enumerate((REPO / name).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            assert re.fullmatch(r"[A-Za-z0-9._-]+==\S+", line), f"{name}:{number}: {line!r} is not NAME==VERSION"
            package, version = line.split("==")
            pins[canonicalize_name(package)] = version
    return pins


def _lower_bound(req: Requirement) -> str | None:
    return next((spec.version for spec in req.specifier if spec.operator == ">="), None)


def test_every_dependency_is_a_range_with_a_lower_bound_not_a_pin() -> None:
    everything = _requirements("", *PROJECT["optional-dependencies"])
    pinned = [str(r) for r in everything if any(s.operator in ("==", "===") for s in r.specifier)]
    unbounded = [str(r) for r in everything if _lower_bound(r) is None]
    assert not pinned, f"pyproject.toml pins {pinned}: declare a range (>=LOW,<NEXT_MAJOR); pins go in constraints.txt"
    assert not unbounded, f"pyproject.toml has no lower bound for {unbounded}: add the lowest version CI tests"


def test_constraints_pin_every_dependency_inside_its_range() -> None:
    pins = _pins("constraints.txt")
    for req in _requirements("", *PROJECT["optional-dependencies"]):
        name = canonicalize_name(req.name)
        assert name in pins, f"constraints.txt pins no version of {req.name}: add `{req.name}==VERSION`"
        version = Version(pins[name])
        assert req.specifier.contains(version, prereleases=True), \
            f"constraints.txt pins {req.name}=={version}, outside pyproject.toml's {req}"


def test_the_lowest_constraints_are_the_lower_bounds() -> None:
    pins = _pins("constraints-lowest.txt")
    for req in _requirements("", "dev"):
        name = canonicalize_name(req.name)
        if name in NOT_IN_LOWEST_PASS:
            continue
        lowest, bound = pins.get(name), _lower_bound(req)
        assert lowest is not None and bound is not None and Version(lowest) == Version(bound), \
            f"constraints-lowest.txt has {req.name}=={pins.get(name)}; pyproject.toml's lower bound is {_lower_bound(req)}"


def test_ci_and_the_quick_start_install_the_pinned_versions() -> None:
    readme = (REPO / "README.md").read_text()
    ci, lowest = (REPO / ".ci" / "run").read_text(), (REPO / ".ci" / "lowest").read_text()
    assert 'pip install -q -c constraints.txt -e ".[dev]"' in readme
    assert '-c constraints.txt -e ".[dev,examples,ui]"' in ci
    assert "\n.ci/lowest\n" in ci
    assert '-c constraints-lowest.txt -e ".[dev]"' in lowest
