"""The dashboard in headless Chromium (Debian's chromium + chromium-driver, driven by selenium)
against a real compute daemon, a real finished campaign and the real `autoresearch ui` command.

One daemon, one campaign, one server and one browser for the module. The screenshots go to a
temporary folder, or with AR_UI_SCREENSHOTS=docs/img to docs/img/ (README.md and docs/ui.md show
them), so a test run leaves the checkout as it was. Without chromium the tests skip, saying so;
with AR_REQUIRE_BROWSER=1 (set by .ci/run) they fail instead: CI must run them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from autoresearch.report.figures import NO_CURVES
from autoresearch.runner import run_campaign
from compute import Client, DaemonConfig, JobSpec, JobState, Resources, start_daemon, stop_daemon
from tests.autoresearch.runner.conftest import FAST, campaign_of, synthetic_config, wait_until
from tests.autoresearch.ui.server import ui_server
from tests.browser import chrome, require_browser, screenshots
from tests.conftest import FAST_DAEMON, _kill_leftovers

require_browser()

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

IMAGES = screenshots("ui-screenshots-")

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]


@pytest.fixture(scope="module")
def fleet_home(tmp_path_factory: pytest.TempPathFactory, tracking: Any) -> Iterator[tuple[Path, str]]:
    """A home with a running daemon (2 GPU slots) and one finished 5-trial campaign: (home, campaign name)."""
    home = tmp_path_factory.mktemp("uihome")
    start_daemon(home, DaemonConfig(**{**FAST_DAEMON, "gpus": 2}))
    try:
        data = synthetic_config(tracking, budget={"max_trials": 5, "max_parallel": 2})
        run_campaign(campaign_of(data), home=home, settings=FAST)
        yield home, data["name"]
    finally:
        stop_daemon(home, stop_jobs=True, wait_s=60)
        _kill_leftovers(home)


@pytest.fixture(scope="module")
def client(fleet_home: tuple[Path, str]) -> Iterator[Client]:
    with Client(fleet_home[0], autostart=False) as c:
        yield c


@pytest.fixture(scope="module")
def url(fleet_home: tuple[Path, str]) -> Iterator[str]:
    with ui_server(fleet_home[0]) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chrome() as driver:
        yield driver


def _open(browser: Any, url: str) -> None:
    browser.get(url)
    WebDriverWait(browser, 30).until(lambda d: d.find_element(By.ID, "live-state").text == "live")


def _text(browser: Any, element_id: str) -> str:
    """The element's text, read in one step (a live refresh may replace it between find and read)."""
    text = browser.execute_script(f"const e = document.getElementById({element_id!r}); return e && e.innerText;")
    assert text is not None, f"the page has no #{element_id}"
    return str(text)


def _click(browser: Any, selector: str) -> None:
    """Click the element, finding it again if a live refresh replaced it meanwhile."""

    def click(driver: Any) -> bool:
        try:
            driver.find_element(By.CSS_SELECTOR, selector).click()
        except StaleElementReferenceException:
            return False
        return True

    WebDriverWait(browser, 10).until(click)


def _shot(browser: Any, name: str) -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(IMAGES / f"ui-{name}.png"))


def _sleeper(client: Client, name: str, seconds: float, gpus: int = 1) -> str:
    return client.submit(JobSpec(name=name, argv=["sleep", str(seconds)], resources=Resources(gpus=gpus))).id


def test_every_page_loads(browser: Any, url: str, client: Client, fleet_home: tuple[Path, str]) -> None:
    name = fleet_home[1]
    blocker = _sleeper(client, "holds-both-gpus", 120, gpus=2)
    wait_until(lambda: client.get(blocker).state is JobState.running, what="the blocker runs")
    waiting = [_sleeper(client, f"waits-{i}", 1) for i in range(3)]
    wait_until(lambda: all(client.get(j).waiting_reason for j in waiting), what="waiting reasons")
    try:
        _open(browser, f"{url}/fleet")
        assert "local" in _text(browser, "nodes") and "2/2 used" in _text(browser, "nodes")
        assert blocker in _text(browser, "running")
        _shot(browser, "fleet")

        _open(browser, f"{url}/queue")
        queue = _text(browser, "queue")
        assert all(j in queue for j in waiting) and "needs 1 GPU" in queue
        _shot(browser, "queue")

        _open(browser, f"{url}/jobs")
        assert blocker in _text(browser, "jobs")
        _shot(browser, "jobs")

        _open(browser, f"{url}/campaigns")
        assert name in _text(browser, "campaigns") and "completed" in _text(browser, "campaigns")
        _shot(browser, "campaigns")

        _open(browser, f"{url}/campaigns/{name}")
        assert len(browser.find_elements(By.CSS_SELECTOR, "#trials tbody tr")) == 5
        assert len(browser.find_elements(By.CSS_SELECTOR, "#best-chart circle")) == 5
        runs_link = browser.find_element(By.ID, "mlflow-link").get_attribute("href")
        assert re.fullmatch(r"http://127\.0\.0\.1:5000/#/experiments/\d+/runs", runs_link or "")
        _shot(browser, "campaign")

        trial_job = client.list(labels={"campaign": name}, limit=1)[0].id
        _open(browser, f"{url}/jobs/{trial_job}")
        assert "succeeded" in _text(browser, "job-state") and "objective" in _text(browser, "log")
        _shot(browser, "job")

        browser.get(f"{url}/jobs/job-0000000000")
        assert "job-0000000000" in _text(browser, "error-message")
    finally:
        for j in [blocker, *waiting]:
            client.cancel(j)


def test_the_campaign_page_sorts_its_trials_and_draws_their_learning_curves(
    browser: Any, url: str, fleet_home: tuple[Path, str]
) -> None:
    pytest.importorskip("plotly", reason="the dashboard's charts need plotly (a dependency in pyproject.toml): pip install -c constraints.txt -e .")
    name = fleet_home[1]
    _open(browser, f"{url}/campaigns/{name}")
    browser.get_log("browser")  # what earlier pages logged
    by_number = [c[1].split()[0] for c in _cells(browser)]

    _click(browser, "#trials a[data-sort='value']")
    WebDriverWait(browser, 30).until(lambda d: "sort=value" in d.current_url)
    cells = _cells(browser)
    values = [float(c[3]) for c in cells]
    traces = {chart: _traces(browser, chart) for chart in ("learning-curves", "parallel-coordinates", "slice")}
    chart = _text(browser, "learning-curves")

    assert by_number == [str(n) for n in range(5)]
    assert values == sorted(values) and sorted(int(c[1].split()[0]) for c in cells) == list(range(5))
    assert "Learning curves (intermediate values)" in chart and NO_CURVES not in chart  # with `pruner: none` too
    assert traces["learning-curves"] == [f"Trial{n}" for n in range(5)]  # one curve per trial
    assert traces["parallel-coordinates"] == ["parcoords"] and traces["slice"] == ["x1", "x2"]  # a panel per parameter
    assert _severe(browser) == []


def _traces(browser: Any, element_id: str) -> list[str]:
    """The traces (names, else types) plotly drew in the element, once it drew them (read in one
    step: a live refresh may replace the element, and it is drawn again)."""
    drawn = (f"const b = document.getElementById({element_id!r});"
             "return b && b._fullLayout && b.data && b.data.length ? b.data.map(t => t.name || t.type) : null;")  # fmt: skip
    try:
        return list(WebDriverWait(browser, 60).until(lambda d: d.execute_script(drawn)))
    except TimeoutException:
        raise AssertionError(f"no chart in #{element_id}: {_text(browser, element_id)!r}, {_severe(browser)}") from None


def _severe(browser: Any) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def _cells(browser: Any) -> list[list[str]]:
    """The trial table's cells, row by row, read in one step (a live refresh may replace them)."""
    script = "return [...document.querySelectorAll('#trials tbody tr')].map(r => [...r.cells].map(c => c.innerText));"
    return [list(row) for row in browser.execute_script(script)]


def _x1(browser: Any) -> dict[int, float]:
    """Trial number -> its x1, for each row of the trial table."""
    return {int(c[1].split()[0]): float(re.search(r"x1=(\S+)", c[4])[1]) for c in _cells(browser)}


def test_filtering_by_a_parameter_range_changes_the_rows_and_the_charts(
    browser: Any, url: str, fleet_home: tuple[Path, str]
) -> None:
    pytest.importorskip("plotly", reason="the dashboard's charts need plotly (pyproject.toml pins it): pip install -e .")
    name = fleet_home[1]
    _open(browser, f"{url}/campaigns/{name}")
    browser.get_log("browser")
    every = _x1(browser)
    low = sorted(every.values())
    bound = f"{(low[1] + low[2]) / 2:.4g}"  # keeps the 3 largest (the table shows x1 rounded)

    field = browser.find_element(By.NAME, "min.x1")
    field.send_keys(bound)
    field.submit()
    WebDriverWait(browser, 30).until(lambda d: "min.x1=" in d.current_url)
    kept = _x1(browser)
    curves = _traces(browser, "learning-curves")

    assert len(every) == 5 and set(kept) == {n for n, x in every.items() if x >= float(bound)}
    assert len(kept) == 3 and curves == [f"Trial{n}" for n in sorted(kept)]  # the charts follow the filter
    assert _severe(browser) == []
    _shot(browser, "campaign-filter")


def test_two_trials_ticked_and_compared_show_both_curves_and_their_params_diff(
    browser: Any, url: str, fleet_home: tuple[Path, str]
) -> None:
    pytest.importorskip("plotly", reason="the dashboard's charts need plotly (pyproject.toml pins it): pip install -e .")
    name = fleet_home[1]
    _open(browser, f"{url}/campaigns/{name}?sort=value")
    browser.get_log("browser")
    _traces(browser, "learning-curves")
    browser.execute_script("document.getElementById('learning-curves').scrollIntoView();")
    _shot(browser, "campaign-curves")
    browser.execute_script("window.scrollTo(0, 0);")
    best, second = [int(c[1].split()[0]) for c in _cells(browser)][:2]
    _click(browser, f"input[name='t'][value='{best}']")
    _click(browser, f"input[name='t'][value='{second}']")
    _click(browser, "#compare-button")
    WebDriverWait(browser, 30).until(lambda d: "/compare?" in d.current_url)
    curves = _traces(browser, "compare-curves")
    diff = _text(browser, "params-diff")

    assert curves == [f"Trial{best}", f"Trial{second}"]
    assert "x1" in diff and "x2" in diff and f"#{best}" in diff and f"#{second}" in diff
    assert _severe(browser) == []
    _shot(browser, "compare")


def test_a_job_goes_pending_running_succeeded_without_a_reload(browser: Any, url: str, client: Client) -> None:
    blocker = _sleeper(client, "blocker", 120, gpus=2)
    wait_until(lambda: client.get(blocker).state is JobState.running, what="the blocker runs")
    job = client.submit(
        JobSpec(
            name="watched", argv=["sh", "-c", "echo first line; sleep 4; echo last line"], resources=Resources(gpus=1)
        )
    ).id
    _open(browser, f"{url}/jobs/{job}")
    assert "pending" in _text(browser, "job-state")
    browser.execute_script(_RECORD_STATES)  # also proves no reload: a reload would lose window.__states

    client.cancel(blocker)
    WebDriverWait(browser, 90, poll_frequency=0.1).until(lambda d: "succeeded" in _text(d, "job-state"))
    WebDriverWait(browser, 30).until(lambda d: "last line" in _text(d, "log"))  # the log followed
    assert "first line" in _text(browser, "log")
    assert browser.execute_script("return window.__states") == ["pending", "running", "succeeded"]


_RECORD_STATES = """
window.__states = [document.getElementById("job-state").innerText.trim()];
new MutationObserver(() => {
  const now = document.getElementById("job-state").innerText.trim();
  if (now !== window.__states[window.__states.length - 1]) { window.__states.push(now); }
}).observe(document.getElementById("content"), {childList: true, subtree: true});
"""


def test_cancel_a_job_from_its_page(browser: Any, url: str, client: Client) -> None:
    job = _sleeper(client, "to-cancel", 120)
    wait_until(lambda: client.get(job).state is JobState.running, what="the job runs")
    _open(browser, f"{url}/jobs/{job}")
    _click(browser, f'form[data-action="/api/jobs/{job}/cancel"] button')
    alert = WebDriverWait(browser, 10).until(lambda d: d.switch_to.alert)
    assert job in alert.text
    alert.accept()

    wait_until(lambda: client.get(job).state is JobState.cancelled, what="the store records the cancel")
    WebDriverWait(browser, 30).until(lambda d: "cancelled" in _text(d, "job-state"))
    assert "cancel requested" in _text(browser, "flash")


def test_the_campaign_page_reads_the_ledger_as_status_does(fleet_home: tuple[Path, str]) -> None:
    """The runner's real ledger, read straight from SQLite (the page's read) and through Optuna's storage."""
    from autoresearch.campaign import Ledger, LedgerReader, campaign_status, status_of

    home, name = fleet_home
    snapshot = LedgerReader(name, home).read()
    loaded = Ledger.load(name, home)
    assert repr(snapshot.trials) == repr(loaded.trials()) and snapshot.facts == loaded.facts()
    assert all(t.mlflow_run_id and t.job_id for t in snapshot.trials)
    now = loaded.facts().started_at
    assert status_of(snapshot.campaign, snapshot.facts, snapshot.trials, snapshot.paths.root, now) == campaign_status(
        loaded, now
    )


def test_a_chat_command_from_the_campaign_page(browser: Any, url: str, fleet_home: tuple[Path, str]) -> None:
    from autoresearch.steering import Note, read_messages

    home, name = fleet_home
    _open(browser, f"{url}/campaigns/{name}")
    form = f'form[data-action="/api/campaigns/{name}/chat"]'
    browser.find_element(By.CSS_SELECTOR, f"{form} input[name='line']").send_keys("/note from the page")
    _click(browser, f"{form} button")
    WebDriverWait(browser, 10).until(lambda d: d.switch_to.alert).accept()
    WebDriverWait(browser, 60).until(lambda d: "queued #" in _text(d, "flash"))
    assert "note for the policy: from the page" in _text(browser, "flash")
    assert [(m.command, m.author) for m in read_messages(name, home=home)][-1] == (Note(text="from the page"), "ui")
