"""The dashboard's log stream (`/jobs/ID/log`) on the real server: a reader far behind a big log
gets its tail, never the whole file; one that keeps up gets what was appended."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from compute import Client, JobSpec, JobState
from autoresearch.ui.fleet import LOG_TAIL_BYTES
from tests.autoresearch.ui.server import ui_server
from tests.compute.helpers import wait_state


def _first_event(web: httpx.Client, url: str) -> tuple[str, str]:
    event = ""
    with web.stream("GET", url) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: ") and event in ("append", "reset"):
                return event, json.loads(line.removeprefix("data: "))
    raise AssertionError(f"no log event from {url}")


def test_a_reader_far_behind_a_big_log_gets_its_tail_not_the_file(compute_client: Client) -> None:
    job_id = compute_client.submit(JobSpec(argv=["echo", "first"])).id
    wait_state(compute_client, job_id, JobState.succeeded)
    log = Path(compute_client.log_path(job_id))
    with log.open("ab") as f:
        f.write(b"".join(b"line %07d\n" % i for i in range(2_000_000)))  # 26 MB
        f.write(b"the last line\n")
    size = log.stat().st_size
    with ui_server(compute_client.home) as base, httpx.Client(base_url=base, timeout=30) as web:
        kind, text = _first_event(web, f"/jobs/{job_id}/log?offset=0")
        assert kind == "reset" and text.endswith("line 1999999\nthe last line\n") and len(text) <= LOG_TAIL_BYTES
        with log.open("ab") as f:
            f.write(b"appended\n")
        assert _first_event(web, f"/jobs/{job_id}/log?offset={size}") == ("append", "appended\n")
