"""The public names of the campaign, ledger and testing packages are all exported (httpx's
test_exported_members)."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("name", ["autoresearch.campaign", "autoresearch.campaign.ledger", "autoresearch.testing"])
def test_all_is_complete_and_importable(name: str) -> None:
    module = importlib.import_module(name)
    for member in module.__all__:  # names may be imported on first use (PEP 562): touch them all
        assert getattr(module, member) is not None
    public = {n for n in dir(module) if not n.startswith("_")}
    submodules = {n for n in public if type(getattr(module, n)).__name__ == "module"}
    suites = {n for n in module.__all__ if n.endswith("_suite")}  # the suites are exported as modules
    assert set(module.__all__) == (public - submodules) | suites
    assert len(module.__all__) == len(set(module.__all__))


def test_an_unknown_name_is_an_attribute_error() -> None:
    import autoresearch.campaign

    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        autoresearch.campaign.Nope  # noqa: B018
