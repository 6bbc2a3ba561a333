"""`report.html` in headless Chromium (Debian's chromium + chromium-driver, driven by selenium),
opened from a file with no network: every plotly graph has its traces and the page logs no error.

A screenshot of the page goes to a temporary folder, or with AR_UI_SCREENSHOTS=docs/img to
docs/img/ (docs/report.md shows it). Without chromium, selenium or plotly the tests skip, saying so; with AR_REQUIRE_BROWSER=1 (set by
.ci/run) a missing browser fails them instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autoresearch.report import write_report
from tests.autoresearch.report.test_views import loss_ledger
from tests.browser import chrome, require_browser, screenshots

pytest.importorskip("plotly", reason="report.html needs plotly (a dependency in pyproject.toml): pip install -c constraints.txt -e .")
require_browser()

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

IMAGES = screenshots("report-screenshots-")

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chrome() as driver:
        yield driver


def _graphs(browser: Any, path: Path) -> dict[str, int]:
    """Open the page; each plotly graph div's id -> its number of traces (-1: not drawn)."""
    browser.get(path.as_uri())
    WebDriverWait(browser, 60).until(lambda d: d.execute_script("return document.readyState") == "complete")
    assert browser.title.endswith("campaign report"), (browser.current_url, browser.title)
    return dict(browser.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('.plotly-graph-div')].map("
        "d => [d.id, d._fullData ? d.data.length : -1]));"
    ))  # fmt: skip


def _errors(browser: Any) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def test_every_view_of_a_campaign_with_pruned_and_failed_trials_renders(
    home: Path, tmp_path: Path, browser: Any
) -> None:
    values: list[float | None] = [None if i in (3, 4, 9) else 0.3 + ((i * 37) % 100) / 100 for i in range(12)]
    ledger = loss_ledger(tmp_path, values)
    ledger.append_note("x near 1 is best; kind matters little")
    page = write_report(ledger, tmp_path / "report").parent / "report.html"

    graphs = _graphs(browser, page)

    titles = browser.execute_script("return [...document.querySelectorAll('h2')].map(h => h.innerText);")
    for title in ("Best so far against trials", "Best so far against time", "Learning curves", "Parallel coordinates",
                  "Slice: objective against each parameter", "Contour: pairs of parameters", "Parameter importances",
                  "Failures by class", "Top trials", "Research log"):  # fmt: skip
        assert title in titles, titles
    assert len(graphs) == 9 and all(n > 0 for n in graphs.values()), graphs
    cut = browser.execute_script(
        "return [...document.querySelectorAll('.plotly-graph-div')].flatMap(d => d.data)"
        ".filter(t => t.name === 'pruned: cut here').map(t => t.x.length);"
    )
    assert cut == [2]  # trials 3 and 9 were pruned (4 failed), each marked where it was cut
    rows = browser.find_elements(By.CSS_SELECTOR, "#top-trials tbody tr")
    assert len(rows) == 9 and rows[0].find_elements(By.TAG_NAME, "td")[0].text == str(ledger.best().number)
    assert "kind matters little" in browser.find_element(By.ID, "research-log").text
    assert _errors(browser) == []
    browser.set_window_size(1280, 2400)
    browser.save_screenshot(str(IMAGES / "report-html.png"))


def test_a_two_trial_campaign_spanning_decades_renders_on_a_log_axis(home: Path, tmp_path: Path, browser: Any) -> None:
    page = write_report(loss_ledger(tmp_path, [214.0, 0.4]), tmp_path / "report").parent / "report.html"

    graphs = _graphs(browser, page)

    assert graphs and all(n > 0 for n in graphs.values()), graphs
    axes = browser.execute_script(
        "return Object.fromEntries([...document.querySelectorAll('.plotly-graph-div')].map(d => [d.layout.title.text,"
        " [d._fullLayout.yaxis.type, d._fullLayout.xaxis._vals.map(v => v.text)]]));"
    )
    trials = next(v for k, v in axes.items() if k.startswith("Best so far against trials"))
    steps = next(v for k, v in axes.items() if k.startswith("Learning curves"))
    assert trials[0] == "log" and steps[0] == "log", axes
    assert all(text.isdigit() for text in trials[1] + steps[1]), axes  # whole trial numbers and steps, no 0.5
    assert _errors(browser) == []
