"""The package's public names are all exported (httpx's test_exported_members)."""

import autoresearch.llm as llm


def test_all_is_complete_and_importable():
    public = {name for name in dir(llm) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(llm, name)).__name__ == "module"}
    assert set(llm.__all__) == public - modules
    for name in llm.__all__:
        assert getattr(llm, name) is not None
