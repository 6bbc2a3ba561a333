"""The files generated from code are current: docs/config.md (the campaign config's JSON Schema),
the table of docs/environment.md (compute/jobenv.py `JOB_VARIABLES`), `jobs submit`'s options
(autoresearch/cli/_submit_options.py) and what `config schema` and `skills list` print
(autoresearch/cli/generated/). When one fails, run `python tools/gen_docs.py`
and commit the file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from compute.jobenv import JOB_VARIABLES

REPO = Path(__file__).resolve().parents[1]


def _gen_docs():
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "tools" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_docs"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", ["docs/config.md", "docs/environment.md", "autoresearch/cli/_submit_options.py",
                                  "autoresearch/cli/generated/campaign_schema.json",
                                  "autoresearch/cli/generated/skills.json"])
def test_the_generated_page_matches_the_code(page: str) -> None:
    expected = {str(path.relative_to(REPO)): text for path, text in _gen_docs().pages().items()}
    assert (REPO / page).read_text() == expected[page], f"{page} is stale: run `python tools/gen_docs.py` and commit it"


def test_the_config_reference_names_every_section_and_key() -> None:
    from autoresearch.campaign.config import Campaign

    text = (REPO / "docs" / "config.md").read_text()
    schema = Campaign.model_json_schema()
    models = {"": schema, **{name: d for name, d in schema["$defs"].items() if "properties" in d}}
    for name, model in models.items():
        assert not name or f"## {name}\n" in text, f"docs/config.md has no section for {name}"
        for key in model["properties"]:
            assert f"| `{key}` |" in text, f"docs/config.md lists no key {key} of {name or 'the top level'}"


def test_the_environment_page_lists_every_variable_autoresearch_sets() -> None:
    text = (REPO / "docs" / "environment.md").read_text()
    missing = [v.name for v in JOB_VARIABLES if f"| `{v.name}" not in text]
    assert not missing, f"docs/environment.md lacks {missing}: run `python tools/gen_docs.py`"


def test_the_check_mode_names_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    gen = _gen_docs()
    stale = tmp_path / "config.md"
    stale.write_text("# an old reference\n")
    monkeypatch.setattr(gen, "pages", lambda: {stale: gen.config_page()})
    monkeypatch.setattr(gen, "REPO", tmp_path)
    assert gen.main(["--check"]) == 1
    assert "config.md is stale: run `python tools/gen_docs.py`" in capsys.readouterr().out
