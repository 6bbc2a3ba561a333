"""compute's public names are all exported through `__all__`."""

from __future__ import annotations

import inspect

import compute


def test_all_lists_every_public_name():
    for name in compute.__all__:  # names are imported on first use (PEP 562): touch them all
        getattr(compute, name)
    public = {name for name, value in vars(compute).items() if not name.startswith("_") and not inspect.ismodule(value)}
    assert set(compute.__all__) == public
    assert len(compute.__all__) == len(set(compute.__all__))
