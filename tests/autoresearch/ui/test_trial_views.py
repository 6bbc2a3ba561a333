"""The campaign page's trial filter (parameter ranges, choices, state), the charts that follow it,
and the compare page, over a real ledger and the real app (Starlette's test client)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from autoresearch.ui import UiSettings, create_app

PATCH = "--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-lr = 0.1\n+lr = {lr}\n"


@pytest.fixture
def web(tmp_path: Path) -> Iterator[TestClient]:
    """A campaign `tried` (score, maximized): trials 0-3 complete, 4 running; x 0.5, -2, 1.5, 3, 4."""
    from autoresearch.campaign import Ledger, Proposal
    from autoresearch.testing._checks import suite_campaign

    home = tmp_path / "home"
    ledger = Ledger.open(suite_campaign(tmp_path, "tried"), home=home)
    for i, (x, value) in enumerate([(0.5, 3.0), (-2.0, 9.0), (1.5, 1.0), (3.0, 4.0), (4.0, None)]):
        proposal = Proposal(params={"x": x, "y": i, "kind": "abc"[i % 3]}, patch=PATCH.format(lr=i / 10))
        number = ledger.admit(proposal).trial_number
        ledger.mark_launched(number, f"job-{number:010d}")
        ledger.report_steps(number, {0: 0.0, 1: float(i), 2: 2.0 * i})
        if value is not None:
            ledger.complete(number, value)
    with TestClient(create_app(UiSettings(home=home), warm=False), base_url="http://localhost") as client:
        yield client


def _rows(web: TestClient, query: str) -> list[int]:
    page = web.get(f"/campaigns/tried?{query}")
    assert page.status_code == 200, page.text
    return [int(n) for n in re.findall(r'<tr data-trial="(\d+)">', page.text)]


def test_the_trial_table_filters_by_parameter_ranges_choices_and_state(web: TestClient) -> None:
    assert _rows(web, "") == [0, 1, 2, 3, 4]
    assert _rows(web, "min.x=0&max.x=3") == [0, 2, 3]
    assert _rows(web, "min.x=1") == [2, 3, 4]
    assert _rows(web, "in.kind=a&in.kind=c") == [0, 2, 3]
    assert _rows(web, "min.x=0&state=complete&sort=value&desc=1") == [3, 0, 2]
    assert _rows(web, "min.x=&max.x=") == [0, 1, 2, 3, 4]  # empty fields filter nothing
    page = web.get("/campaigns/tried?min.x=0&max.x=3&sort=value").text
    assert "3 of 5 trials" in page
    assert 'href="?sort=value&desc=1&amp;min.x=0&amp;max.x=3"' in page  # sorting keeps the filter
    assert 'data-figure="/api/campaigns/tried/charts/parallel?min.x=0&amp;max.x=3"' in page  # so do the charts


@pytest.mark.parametrize(("query", "said"), [
    ("min.x=abc", "min.x=&#39;abc&#39;: a number"),
    ("min.lr=1", "min.lr: the campaign has no parameter &#39;lr&#39;; its parameters: x, y, kind"),
    ("in.kind=z", "in.kind=&#39;z&#39;: not a choice of kind; its choices: a, b, c"),
    ("in.x=1", "in.x: x is a float parameter: filter it with min.x / max.x"),
    ("min.kind=1", "min.kind: kind is categorical: filter it with in.kind=CHOICE"),
    ("state=done", "state=&#39;done&#39;: use one of proposed, running, complete"),
])  # fmt: skip
def test_a_bad_filter_says_what_the_field_takes(web: TestClient, query: str, said: str) -> None:
    page = web.get(f"/campaigns/tried?{query}")
    assert page.status_code == 400 and said in page.text


def test_the_charts_draw_the_trials_the_filter_keeps(web: TestClient) -> None:
    pytest.importorskip("plotly", reason="the dashboard's charts need plotly (pyproject.toml pins it): pip install -e .")
    curves = web.get("/api/campaigns/tried/charts/curves?min.x=0&max.x=3").json()
    assert [t["name"] for t in curves["data"]] == ["Trial0", "Trial2", "Trial3"]
    (parallel,) = web.get("/api/campaigns/tried/charts/parallel").json()["data"]
    dims = {d["label"]: d for d in parallel["dimensions"]}
    assert list(dims) == ["score", "x", "y", "kind"] and dims["score"]["values"] == [3.0, 9.0, 1.0, 4.0]
    assert dims["kind"]["ticktext"] == ["a", "b", "c"] and dims["kind"]["values"] == [0, 1, 2, 0]
    slices = web.get("/api/campaigns/tried/charts/slice?state=complete").json()["data"]
    assert [t["x"] for t in slices] == [[0.5, -2.0, 1.5, 3.0], [0, 1, 2, 3], ["a", "b", "c", "a"]]
    missing = web.get("/api/campaigns/tried/charts/contour")
    assert missing.status_code == 404 and "charts: curves, parallel, slice" in missing.json()["error"]


def test_the_compare_page_shows_the_params_diff_curves_and_patches_side_by_side(web: TestClient) -> None:
    page = web.get("/campaigns/tried/compare?t=3&t=0")
    assert page.status_code == 200, page.text
    diff = page.text[page.text.index('id="params-diff"'):page.text.index("</table>", page.text.index('id="params-diff"'))]
    assert re.findall(r"<tr><th>(\w+)</th><td>([^<]*)</td><td>([^<]*)</td></tr>", diff) == [("x", "3", "0.5"), ("y", "3", "0")]
    assert "The same in all: <code>kind=a </code>" in page.text
    assert 'data-figure="/api/campaigns/tried/charts/curves?t=3&amp;t=0"' in page.text
    assert "lr = 0.3" in page.text and "lr = 0.0" in page.text  # both patches
    assert '<span class="del">-+lr = 0.3</span>' in page.text and '<span class="add">++lr = 0.0</span>' in page.text
    curves = web.get("/api/campaigns/tried/charts/curves?t=3&t=0").json()
    assert [t["name"] for t in curves["data"]] == ["Trial3", "Trial0"]


@pytest.mark.parametrize(("query", "said"), [
    ("t=1", "name at least two different trials"),
    ("t=1&t=1", "name at least two different trials"),
    ("t=1&t=9", "no trial 9; trials are 0..4"),
    ("t=1&t=two", "trial numbers (whole numbers)"),
])  # fmt: skip
def test_compare_refuses_what_it_cannot_compare(web: TestClient, query: str, said: str) -> None:
    page = web.get(f"/campaigns/tried/compare?{query}")
    assert page.status_code == 400 and said in page.text
