"""`autoresearch run CONFIG --detach`: the runner goes to the background (a session of its own, its
output in the campaign folder's runner.log) and the command returns while the campaign runs."""

from __future__ import annotations

import json
import os
import subprocess

from tests.autoresearch.chat.conftest import CLI, cli_env
from tests.autoresearch.runner.conftest import synthetic_config, wait_until, write_config


def _cli(home, *args: str) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run([*CLI, *args], env=cli_env(home), capture_output=True, text=True, timeout=180)


def _state(home, name: str) -> str:  # type: ignore[no-untyped-def]
    return json.loads(_cli(home, "status", name, "--json").stdout)["state"]


def test_run_detach_returns_while_the_campaign_runs_and_the_runner_finishes_it(compute_client, tracking, tmp_path):
    data = synthetic_config(tracking, steps=25, step_seconds=0.4, budget={"max_trials": 2, "max_parallel": 1})
    config = write_config(tmp_path, data)
    started = _cli(compute_client.home, "run", str(config), "--detach", "--json")
    assert started.returncode == 0, started.stderr
    shown = json.loads(started.stdout)
    assert (shown["campaign"], shown["running"]) == (data["name"], True)
    pid, log = shown["pid"], shown["log"]
    os.kill(pid, 0)  # alive: the command returned before the campaign ended
    assert os.getsid(pid) == pid  # a session of its own: the caller's shell and its signals are not its
    assert _state(compute_client.home, data["name"]) == "running"
    assert log.endswith(f"campaigns/{data['name']}/runner.log")

    wait_until(lambda: _state(compute_client.home, data["name"]) == "completed", timeout=180, what="the campaign")
    wait_until(lambda: subprocess.run(["ps", "-p", str(pid), "-o", "stat="], capture_output=True, text=True)
               .stdout.strip() in ("", "Z"), what="the runner's exit")  # fmt: skip
    assert f"campaign {data['name']} completed" in open(log).read()

    human = _cli(compute_client.home, "run", str(config), "--detach")  # ended already: the runner says so and exits
    assert human.returncode == 0 and f"campaign {data['name']}" in human.stdout and "runner.log" in human.stdout


def test_run_detach_refuses_a_bad_config_at_once_and_json_without_detach(compute_client, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: broken\ncommand: [python, x.py]\nobjective: {metric: loss, mode: down}\n")
    refused = _cli(compute_client.home, "run", str(bad), "--detach", "--json")
    assert refused.returncode == 2 and "mode" in refused.stderr and refused.stdout == ""
    assert not (compute_client.home / "campaigns" / "broken").exists()
    alone = _cli(compute_client.home, "run", str(bad), "--json")
    assert alone.returncode == 2 and "--json goes with --detach" in alone.stderr


def test_a_runner_that_dies_at_start_is_quoted_by_whole_lines_of_its_log(tmp_path):  # type: ignore[no-untyped-def]
    from autoresearch.runner.detach import _tail

    log = tmp_path / "runner.log"
    log.write_text("x" * 2000 + "\nTraceback (most recent call last):\nValueError: bad config\n")
    assert _tail(log) == "Traceback (most recent call last): / ValueError: bad config"  # no cut line before them
    assert _tail(tmp_path / "missing.log") == ""
