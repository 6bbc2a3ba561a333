"""What the pages read: pagination on the server, the queue in scheduling order, filters, the chart."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from autoresearch.campaign import Objective, TrialState
from autoresearch.campaign.status import TrialSummary
from autoresearch.ui import UiSettings, create_app
from autoresearch.ui.campaigns import best_curve
from autoresearch.ui.fleet import parse_filter
from autoresearch.ui.paging import page_args
from compute import Client, JobSpec, Resources


def _submit(client: Client, name: str, priority: int = 50, gpus: int = 1) -> str:
    return client.submit(JobSpec(name=name, argv=["true"], priority=priority, resources=Resources(gpus=gpus),
                                 labels={"group": name[0]})).id  # fmt: skip


def test_queue_is_in_scheduling_order_and_paginated_on_the_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Client(home, autostart=False) as client:  # no daemon: no pass yet, so priority then FIFO
        low = _submit(client, "a-low", priority=10)
        high = [_submit(client, f"b-high-{i}", priority=90) for i in range(3)]
        normal = _submit(client, "c-normal", priority=50)
        order = [job.id for job in client.queue(limit=10)]
    assert order == [*high, normal, low]

    app = create_app(UiSettings(home=home), warm=False)
    with TestClient(app, base_url="http://localhost") as web:
        first = web.get("/queue?per_page=2")
        assert first.status_code == 200
        assert high[0] in first.text and high[1] in first.text and high[2] not in first.text
        assert "page 1 of 3 (5 in all)" in first.text and 'rel="next"' in first.text
        last = web.get("/queue?per_page=2&page=3")
        assert low in last.text and high[0] not in last.text and 'rel="next"' not in last.text

        jobs = web.get("/jobs?label=group=b&per_page=2")
        assert high[2] in jobs.text and high[1] in jobs.text and low not in jobs.text and 'rel="next"' in jobs.text
        bad = web.get("/jobs?state=done")
        assert bad.status_code == 400 and "state=&#39;done&#39; is not a job state" in bad.text
        assert web.get("/queue?page=0").status_code == 400
        missing = web.get("/jobs/job-0000000000")
        assert missing.status_code == 404 and "job-0000000000" in missing.text
        assert web.get("/campaigns/nope").status_code == 404
        partial = web.get("/queue", headers={"X-Partial": "1"})
        assert "<nav>" not in partial.text and "<h1>Queue</h1>" in partial.text


def test_bad_query_values_say_what_is_allowed() -> None:
    with pytest.raises(ValueError, match="write key=value"):
        parse_filter([], "campaign", None)
    with pytest.raises(ValueError, match="not a number 0-100"):
        parse_filter([], None, "high")
    with pytest.raises(ValueError, match="per_page 1-500"):
        page_args("1", "5000")
    assert parse_filter(["running"], "campaign=x", "10").labels == {"campaign": "x"}


def _trial(number: int, value: float | None, state: TrialState = TrialState.complete) -> TrialSummary:
    return TrialSummary(number=number, state=state, params={}, value=value, job_id=None, mlflow_run_id=None)


def test_the_best_so_far_curve_steps_down_for_a_minimized_metric() -> None:
    objective = Objective(metric="loss", mode="min")
    trials = [_trial(0, 5.0), _trial(1, 7.0), _trial(2, None, TrialState.failed), _trial(3, 2.0)]
    curve = best_curve(trials, objective)
    assert curve is not None
    assert [title for _, _, title in curve.dots] == ["trial 0: 5", "trial 1: 7", "trial 3: 2"]
    ys = [float(p.split(",")[1]) for p in curve.line.split()]
    assert ys[0] == ys[1] == ys[2] and ys[-1] > ys[0]  # flat at 5 until trial 3, then lower (SVG y grows down)
    assert best_curve(trials[:1], objective) is None  # one point is no curve


def test_the_fleet_page_shows_projects_with_quota_and_pending_work(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Client(home, autostart=False) as client:
        client.set_project("vision", quota_gpus=6, weight=2.0)
        client.submit(JobSpec(name="v", argv=["true"], project="vision", resources=Resources(gpus=1)))
    with TestClient(create_app(UiSettings(home=home), warm=False), base_url="http://localhost") as web:
        page = web.get("/fleet")
    assert page.status_code == 200 and 'id="projects"' in page.text
    row = next(line for line in page.text.splitlines() if "<td>vision</td>" in line)
    assert "<td>6</td>" in row and "<td>2.0</td>" in row  # quota and weight; its pending job counted too
    assert ">quota_gpus<" in page.text and ">borrowed<" in page.text and ">pending<" in page.text


def test_the_fleet_page_has_no_projects_section_without_projects(tmp_path: Path) -> None:
    with Client(tmp_path / "home", autostart=False) as client:  # jobs of the implicit `default` project only
        _submit(client, "a-job")
    with TestClient(create_app(UiSettings(home=tmp_path / "home"), warm=False), base_url="http://localhost") as web:
        page = web.get("/fleet")
    assert page.status_code == 200 and 'id="projects"' not in page.text


def test_the_campaign_page_links_the_mlflow_runs_table_and_each_run(tmp_path: Path) -> None:
    from autoresearch.campaign import Ledger, Proposal
    from autoresearch.testing._checks import suite_campaign

    home = tmp_path / "home"
    ledger = Ledger.open(suite_campaign(tmp_path, "linked"), home=home)
    ledger.set_mlflow_experiment("12")
    number = ledger.admit(Proposal(params={"x": 0.5, "y": 2, "kind": "b"})).trial_number
    ledger.mark_launched(number, "job-0000000001")
    ledger.set_mlflow_run(number, "0123abcd")
    ledger.complete(number, 4.25)
    with TestClient(create_app(UiSettings(home=home), warm=False), base_url="http://localhost") as web:
        page = web.get("/campaigns/linked").text
    # MLflow 3 opens a bare `#/experiments/12` on its GenAI "Overview" page, not the runs
    assert 'href="http://127.0.0.1:5000/#/experiments/12/runs" id="mlflow-link"' in page
    assert 'href="http://127.0.0.1:5000/#/experiments/12/runs/0123abcd"' in page


def test_the_campaign_page_shows_the_winner_as_mean_sd_n_and_marks_confirmations(tmp_path: Path) -> None:
    from autoresearch.campaign import Ledger, Proposal
    from autoresearch.testing._checks import suite_campaign

    home = tmp_path / "home"
    ledger = Ledger.open(suite_campaign(tmp_path, "confirmed", confirm={"top_k": 2, "seeds": 2}), home=home)
    values = [(None, 4.0), (None, 3.0), (0, 4.2), (0, 3.8)]  # trial 0: 4.0 4.2 3.8 -> 4.0 +- 0.2 (n=3)
    for confirms, value in values:
        number = ledger.admit(Proposal(params={"x": 0.5, "y": 2, "kind": "b"}, confirms=confirms)).trial_number
        ledger.mark_launched(number, f"job-{number:010d}")
        ledger.complete(number, value)
    with TestClient(create_app(UiSettings(home=home), warm=False), base_url="http://localhost") as web:
        page = web.get("/campaigns/confirmed").text
    best = page.split('id="best">', 1)[1].split("</td>", 1)[0]
    assert "4 ± 0.2 (trial 0, n=3)" in best
    assert "separable from trial 1: yes" in best  # 4.0 - 3.0 > 2 x 0.2
    assert page.count('class="badge confirmation">confirms #0</span>') == 2


def test_a_campaign_name_that_is_not_a_name_is_not_found(tmp_path: Path) -> None:
    """Issue 33 item 9: `..` names the home itself, not a campaign: 404 saying so (the router
    already keeps '/' out of a name)."""
    (tmp_path / "home" / "campaigns").mkdir(parents=True)
    app = create_app(UiSettings(home=tmp_path / "home"), warm=False)
    with TestClient(app, base_url="http://localhost") as web:
        page = web.get("/campaigns/%2E%2E")
    assert page.status_code == 404 and "is not a campaign name" in page.text.replace("&#39;", "'")


def test_the_trial_table_sorts_by_any_column_across_pages(tmp_path: Path) -> None:
    import re

    from autoresearch.campaign import Ledger, Proposal
    from autoresearch.testing._checks import suite_campaign

    home = tmp_path / "home"
    ledger = Ledger.open(suite_campaign(tmp_path, "sorted"), home=home)
    for x, value in [(0.5, 3.0), (-2.0, 9.0), (4.0, None), (1.5, 1.0)]:
        number = ledger.admit(Proposal(params={"x": x, "y": 2, "kind": "b"})).trial_number
        ledger.mark_launched(number, f"job-{number:010d}")
        if value is not None:
            ledger.complete(number, value)

    def rows(query: str) -> list[int]:
        page = web.get(f"/campaigns/sorted?{query}")
        assert page.status_code == 200, page.text
        return [int(n) for n in re.findall(r'<tr data-trial="(\d+)">', page.text)]

    with TestClient(create_app(UiSettings(home=home), warm=False), base_url="http://localhost") as web:
        assert rows("") == [0, 1, 2, 3]
        assert rows("sort=value&desc=1") == [1, 0, 3, 2]  # the running trial has no value: last
        assert rows("sort=value&per_page=2&page=2") == [1, 2]  # sorted before paging
        assert rows("sort=x") == [1, 0, 3, 2]
        assert rows("sort=state") == [0, 1, 3, 2]  # complete before running
        header = web.get("/campaigns/sorted?sort=value").text
        assert 'href="?sort=value&desc=1" class="sort here" data-sort="value">score ↑' in header
        bad = web.get("/campaigns/sorted?sort=loss")
    assert bad.status_code == 400 and "sort &#39;loss&#39;: use one of number, state, value" in bad.text


def test_the_campaign_page_draws_learning_curves_with_plotly_from_the_installed_package(tmp_path: Path) -> None:
    pytest.importorskip("plotly", reason="the dashboard's charts need plotly (a dependency in pyproject.toml): pip install -c constraints.txt -e .")
    from autoresearch.campaign import Ledger, Proposal
    from autoresearch.testing._checks import suite_campaign

    home = tmp_path / "home"
    ledger = Ledger.open(suite_campaign(tmp_path, "curved"), home=home)
    for i in range(3):
        number = ledger.admit(Proposal(params={"x": i / 2, "y": 2, "kind": "b"})).trial_number
        ledger.mark_launched(number, f"job-{number:010d}")
        for step in range(4 if i != 1 else 2):
            ledger.report(number, step, 1.0 + i + step)
        ledger.prune(number) if i == 1 else ledger.complete(number, 4.0 + i)

    with TestClient(create_app(UiSettings(home=home), warm=False), base_url="http://localhost") as web:
        page = web.get("/campaigns/curved").text
        figure = web.get("/api/campaigns/curved/charts/curves").json()
        script = web.get("/static/plotly.min.js")

    assert 'id="learning-curves" class="chart" data-figure="/api/campaigns/curved/charts/curves"' in page
    traces = {t["name"]: (t["x"], t["y"]) for t in figure["data"]}
    assert traces["Trial0"] == ([0, 1, 2, 3], [1.0, 2.0, 3.0, 4.0]) and traces["Trial1"] == ([0, 1], [2.0, 3.0])
    assert traces["pruned: cut here"] == ([1], [3.0])  # trial 1 was cut after step 1
    assert script.status_code == 200 and script.headers["content-type"].startswith("application/javascript")
    assert "plotly.js" in script.text[:2000]
