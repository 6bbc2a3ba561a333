"""A package's names imported on first use (PEP 562): the one `__getattr__` that `compute`,
`autoresearch.campaign`, its ledger and `autoresearch.runner` install, so importing a package
costs only the names a caller reads."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str]) -> Callable[[str], Any]:
    """A module-level `__getattr__` for `package`: a public name is imported from the module
    `where` gives for it the first time it is read, then kept in the package's namespace (later
    reads are plain attribute reads). A submodule's name gives the submodule, imported then (as a
    package that imports its modules gives it); any other name is an AttributeError."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            if importlib.util.find_spec(f"{package}.{name}") is None:
                raise AttributeError(f"module {package!r} has no attribute {name!r}")
            return importlib.import_module(f"{package}.{name}")  # a submodule, as an eager package has it
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
