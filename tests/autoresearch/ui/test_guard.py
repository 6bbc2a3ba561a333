"""Who may read and act: the bind check, the token, cross-site requests and --read-only."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from autoresearch.ui import TOKEN_ENV, UiError, UiSettings, checked_settings, create_app
from compute import Client, JobSpec, JobState
from tests.autoresearch.ui.server import ui_server

TOKEN = "s3cret-token-for-tests"


def _pending_job(home: Path) -> str:
    with Client(home, autostart=False) as client:  # no daemon: the job stays pending
        return client.submit(JobSpec(name="waits", argv=["sleep", "60"])).id


def test_a_non_loopback_host_needs_a_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    with pytest.raises(UiError, match=r"--host 0\.0\.0\.0 is not a loopback address.*--token"):
        checked_settings("0.0.0.0", 8765, None, False)
    assert checked_settings("127.0.0.1", 8765, None, False).token is None
    assert checked_settings("localhost", 8765, None, False).host == "localhost"
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    assert checked_settings("0.0.0.0", 8765, None, False).token == TOKEN
    with pytest.raises(UiError, match="at least 8"):
        checked_settings("0.0.0.0", 8765, "short", False)


def test_the_command_refuses_a_public_host_without_a_token(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from autoresearch.cli import app

    result = CliRunner().invoke(app, ["ui", "--host", "0.0.0.0"], env={TOKEN_ENV: ""})
    assert result.exit_code == 2
    assert "not a loopback address" in result.output and "--token" in result.output


def test_bound_to_a_public_address_an_action_without_the_token_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    job_id = _pending_job(home)
    with ui_server(home, "--host", "0.0.0.0", "--token", TOKEN) as url:
        assert httpx.get(f"{url}/fleet").status_code == 401
        refused = httpx.post(f"{url}/api/jobs/{job_id}/cancel", json={})
        assert refused.status_code == 401 and "token" in refused.text
        with Client(home, autostart=False) as client:
            assert client.get(job_id).state is JobState.pending  # the store did not change

        with httpx.Client(
            base_url=url, follow_redirects=True
        ) as browser:  # a person opens /?token=... once: a cookie from then on
            first = browser.get("/?token=" + TOKEN)
            assert first.status_code == 200 and "Fleet" in first.text
            assert browser.cookies.get("ar_ui_token") == TOKEN
            no_csrf = browser.post(f"/api/jobs/{job_id}/cancel", json={})
            assert no_csrf.status_code == 403 and "CSRF" in no_csrf.json()["error"]

        done = httpx.post(f"{url}/api/jobs/{job_id}/cancel", json={"reason": "not needed"},
                          headers={"Authorization": f"Bearer {TOKEN}"})  # fmt: skip
        assert done.status_code == 200, done.text
        with Client(home, autostart=False) as client:
            assert client.get(job_id).state is JobState.cancelled


def test_cross_site_requests_cannot_act(tmp_path: Path) -> None:
    home = tmp_path / "home"
    job_id = _pending_job(home)
    app = create_app(UiSettings(home=home), warm=False)
    csrf = app.state.dashboard.guard.csrf
    with TestClient(app, base_url="http://127.0.0.1:8765") as web:
        url = f"/api/jobs/{job_id}/priority"
        form = web.post(url, data={"priority": "high"}, headers={"X-CSRF-Token": csrf})
        assert form.status_code == 415  # a cross-site HTML form cannot send JSON
        assert web.post(url, json={"priority": "high"}).status_code == 403  # no CSRF token
        other = web.post(url, json={"priority": "high"}, headers={"X-CSRF-Token": csrf, "Sec-Fetch-Site": "cross-site"})
        assert other.status_code == 403 and "cross-site" in other.json()["error"]
        origin = web.post(
            url, json={"priority": "high"}, headers={"X-CSRF-Token": csrf, "Origin": "http://evil.example"}
        )
        assert origin.status_code == 403 and "evil.example" in origin.json()["error"]
        bad = web.post(url, json={"priority": "very"}, headers={"X-CSRF-Token": csrf})
        assert bad.status_code == 400 and "very" in bad.json()["error"]
        ok = web.post(
            url,
            json={"priority": "high"},
            headers={"X-CSRF-Token": csrf, "Origin": "http://127.0.0.1:8765", "Sec-Fetch-Site": "same-origin"},
        )
        assert ok.status_code == 200, ok.text
        assert "priority 75 (high)" in ok.json()["message"]
    with Client(home, autostart=False) as client:
        assert client.get(job_id).priority == 75


def test_read_only_hides_and_refuses_actions(tmp_path: Path) -> None:
    home = tmp_path / "home"
    job_id = _pending_job(home)
    app = create_app(UiSettings(home=home, read_only=True), warm=False)
    with TestClient(app, base_url="http://localhost") as web:
        page = web.get(f"/jobs/{job_id}")
        assert page.status_code == 200 and "read-only" in page.text
        assert 'class="action"' not in page.text
        refused = web.post(f"/api/jobs/{job_id}/cancel", json={},
                           headers={"X-CSRF-Token": app.state.dashboard.guard.csrf})  # fmt: skip
        assert refused.status_code == 403 and "--read-only" in refused.json()["error"]
    with Client(home, autostart=False) as client:
        assert client.get(job_id).state is JobState.pending


def test_campaign_actions_name_what_exists(tmp_path: Path) -> None:
    app = create_app(UiSettings(home=tmp_path / "home"), warm=False)
    headers = {"X-CSRF-Token": app.state.dashboard.guard.csrf}
    with TestClient(app, base_url="http://localhost") as web:
        unknown = web.post("/api/campaigns/nope/explode", json={}, headers=headers)
        known = "pause, resume, stop, note, budget, space, priority, try, cancel, approve, deny"
        assert unknown.status_code == 404 and known in unknown.json()["error"]
        missing = web.post("/api/campaigns/nope/pause", json={"reason": "x"}, headers=headers)
        assert missing.status_code == 400 and "no campaign named 'nope'" in missing.json()["error"]
        empty = web.post("/api/campaigns/nope/budget", json={"changes": {}}, headers=headers)
        assert empty.status_code == 400 and "changes" in empty.json()["error"]


def test_campaign_actions_post_the_chat_commands_to_its_inbox(tmp_path: Path) -> None:
    import os

    from autoresearch.campaign import Ledger
    from autoresearch.steering import Pause, SetBudget, read_messages
    from tests.autoresearch.campaign.conftest import make_campaign

    home = Path(os.environ["AUTORESEARCH_HOME"])
    Ledger.open(make_campaign(tmp_path, name="steered"), home)
    app = create_app(UiSettings(home=home), warm=False)
    headers = {"X-CSRF-Token": app.state.dashboard.guard.csrf}
    with TestClient(app, base_url="http://localhost") as web:
        paused = web.post("/api/campaigns/steered/pause", json={"reason": "look at the data"}, headers=headers)
        assert paused.status_code == 200 and "no runner is attached" in paused.json()["message"]
        budget = web.post("/api/campaigns/steered/budget", json={"changes": {"max_trials": "80"}}, headers=headers)
        assert budget.status_code == 200 and "80" in budget.json()["message"], budget.text
        bad = web.post("/api/campaigns/steered/budget", json={"changes": {"max_trials": "many"}}, headers=headers)
        assert bad.status_code == 400 and "max_trials" in bad.json()["error"]
    messages = read_messages("steered", home=home)
    assert [m.command for m in messages] == [Pause(reason="look at the data"), SetBudget(changes={"max_trials": 80})]
    assert {m.author for m in messages} == {"ui"}


def test_every_steering_command_and_any_chat_line_can_be_sent_from_the_dashboard(tmp_path: Path) -> None:
    import os

    from autoresearch.campaign import Ledger
    from autoresearch.steering import Note, SetSpace, TryTrial, read_messages
    from tests.autoresearch.campaign.conftest import make_campaign

    home = Path(os.environ["AUTORESEARCH_HOME"])
    Ledger.open(make_campaign(tmp_path, name="steered"), home)
    app = create_app(UiSettings(home=home), warm=False)
    headers = {"X-CSRF-Token": app.state.dashboard.guard.csrf}
    with TestClient(app, base_url="http://localhost") as web:
        note = web.post("/api/campaigns/steered/note", json={"text": "try x near 1"}, headers=headers)
        assert note.status_code == 200 and "note for the policy: try x near 1" in note.json()["message"], note.text
        tried = web.post("/api/campaigns/steered/try", json={"params": {"x": "1.5", "y": 3, "kind": "b"}},
                         headers=headers)  # fmt: skip
        assert tried.status_code == 200 and "try x=1.5 y=3 kind=b" in tried.json()["message"], tried.text
        line = web.post("/api/campaigns/steered/chat", json={"line": "/space x=0..2"}, headers=headers)
        assert line.status_code == 200 and "search_space.x:" in line.json()["message"], line.text
        status = web.post("/api/campaigns/steered/chat", json={"line": "/status"}, headers=headers)
        assert status.status_code == 200 and "campaign steered:" in status.json()["message"]
        for bad, needle in [("/space nope=1..2", "nope is not in the search space"),
                            ("/bogus", "unknown command /bogus"), ("space x=0..2", "is not a slash command")]:  # fmt: skip
            refused = web.post("/api/campaigns/steered/chat", json={"line": bad}, headers=headers)
            assert refused.status_code == 400 and needle in refused.json()["error"], refused.text
    assert [m.command for m in read_messages("steered", home=home)] == [
        Note(text="try x near 1"), TryTrial(params={"x": 1.5, "y": 3, "kind": "b"}), SetSpace(params={"x": [0, 2]})]
    assert {m.author for m in read_messages("steered", home=home)} == {"ui"}


def test_a_dns_rebinding_page_can_neither_read_nor_act(tmp_path: Path) -> None:
    """The real server on loopback with no token: what a rebound page sends (its own name in Host)."""
    home = tmp_path / "home"
    job_id = _pending_job(home)
    with ui_server(home) as url:
        port = url.rsplit(":", 1)[1]
        evil = {"Host": f"evil.example:{port}"}
        for path in ("/", "/fleet", f"/jobs/{job_id}", f"/jobs/{job_id}/log"):
            page = httpx.get(url + path, headers=evil)
            assert page.status_code == 400 and "--allowed-host evil.example" in page.text, (path, page.text)
        refused = httpx.post(f"{url}/api/jobs/{job_id}/cancel", json={},
                             headers={**evil, "Origin": f"http://evil.example:{port}"})  # fmt: skip
        assert refused.status_code == 400
        with Client(home, autostart=False) as client:
            assert client.get(job_id).state is JobState.pending  # nothing changed

        # The page's own origin, sent to the dashboard's real name: the action is refused.
        with httpx.Client(base_url=url) as browser:
            csrf = browser.get("/fleet").text.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]
            cross = browser.post(f"/api/jobs/{job_id}/cancel", json={},
                                 headers={"X-CSRF-Token": csrf, "Origin": "http://evil.example"})  # fmt: skip
            assert cross.status_code == 403 and "evil.example" in cross.json()["error"]
            for name in ("localhost", "127.0.0.1", "[::1]"):  # the names it does serve
                assert browser.get("/fleet", headers={"Host": f"{name}:{port}"}).status_code == 200, name
            ok = browser.post(f"/api/jobs/{job_id}/cancel", json={"reason": "same origin"},
                              headers={"X-CSRF-Token": csrf, "Origin": url})  # fmt: skip
            assert ok.status_code == 200, ok.text
        with Client(home, autostart=False) as client:
            assert client.get(job_id).state is JobState.cancelled

    with ui_server(home, "--allowed-host", "dash.example.org") as url:
        port = url.rsplit(":", 1)[1]
        assert httpx.get(f"{url}/fleet", headers={"Host": f"dash.example.org:{port}"}).status_code == 200


def test_an_action_with_a_foreign_origin_is_refused_even_with_the_token(tmp_path: Path) -> None:
    home = tmp_path / "home"
    job_id = _pending_job(home)
    app = create_app(UiSettings(home=home, token=TOKEN), warm=False)
    with TestClient(app, base_url="http://localhost:8765") as web:
        refused = web.post(f"/api/jobs/{job_id}/cancel", json={},
                           headers={"Authorization": f"Bearer {TOKEN}", "Origin": "null"})  # fmt: skip
        assert refused.status_code == 403 and "Origin null" in refused.json()["error"]
    with Client(home, autostart=False) as client:
        assert client.get(job_id).state is JobState.pending


def test_an_allowed_host_must_be_a_name() -> None:
    with pytest.raises(UiError, match="--allowed-host 'http://x.org'"):
        checked_settings("127.0.0.1", 8765, None, False, allowed_hosts=("http://x.org",))
