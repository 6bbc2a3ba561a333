"""Every public name of the skills modules is exported from `skills`."""

from __future__ import annotations

import skills


def test_public_names_are_exported() -> None:
    public = {
        name
        for module in (skills.bounds, skills.builtin, skills.context, skills.exporters, skills.models,
                       skills.registry, skills.schema, skills.tooldef)
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__
    }
    assert public - set(skills.__all__) == set()
