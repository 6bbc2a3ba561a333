"""The fast path (autoresearch/cli/_fast.py) answers exactly as the typer app does: the same
stdout, stderr and exit code for status, list, logs and submit, errors included; its options are the
typer commands' (so they cannot drift); a submission the daemon does not answer is withdrawn."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from autoresearch.cli import _fast
from autoresearch.cli._app import load
from compute import Client, ComputePaths, JobSpec, Store, stop_daemon
from compute.reads import job_views, open_store
from compute.submissions import request
from compute.submitter import Submitter
from tests.autoresearch.cli.climodules import FAST_FORBIDDEN, run_cli, run_typer


def _typer_command(*path: str) -> Any:
    """The typer command at `path`: a group's command (`jobs status`) or a top-level one (`ui`)."""
    if len(path) == 1:
        return load(path[0])
    return load(path[0]).commands[path[1]]  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", list(_fast.COMMANDS))
def test_the_fast_path_reads_exactly_the_options_the_typer_command_declares(path: tuple[str, ...]) -> None:
    fast = _fast.COMMANDS[path]
    command = _typer_command(*path)
    declared = {name: param for param in command.params if param.param_type_name == "option" for name in param.opts}
    declared.pop("--help", None)
    assert set(fast.options) == set(declared), path
    for name, opt in fast.options.items():
        param = declared[name]
        kind = list if param.multiple else param.type_descriptor.annotation  # bool: a flag
        assert (opt.param, opt.kind, opt.default, opt.minimum, param.secondary_opts) == (
            param.name, kind, param.default, param.min, []), (path, name)
    assert fast.interspersed == command.context_settings.get("allow_interspersed_args", True)


def test_parse_reads_as_click_does_or_falls_back() -> None:
    submit = _fast.COMMANDS[("jobs", "submit")]
    values, args = _fast.parse(submit, ["--name=a", "--label", "k=v", "--label=x=y", "python", "t.py", "--gpus", "2"])
    assert (values["name"], values["label"], values["gpus"], args) == ("a", ["k=v", "x=y"], 0, ["python", "t.py", "--gpus", "2"])
    assert _fast.parse(submit, ["--gpus", "2", "--", "--x"])[1] == ["--x"]
    assert _fast.parse(submit, ["--max-retries", "-1", "--name", "--json", "x"])[0]["name"] == "--json"
    for odd in (["--gpus", "two", "--", "x"], ["--json=1", "--", "x"], ["--nope", "x"], ["--help"], ["--name"],
                ["-h"]):
        with pytest.raises(_fast.Fallback):
            _fast.parse(submit, odd)
    with pytest.raises(_fast.Fallback):  # below the option's min=1: typer's message
        _fast.parse(_fast.COMMANDS[("jobs", "list")], ["--limit", "0"])
    assert _fast.run(["jobs", "status", "job-x"]) is None  # the table is typer's
    assert _fast.run(["jobs", "wait", "job-x"]) is None and _fast.run(["--help"]) is None


def _same(home: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `args` on the fast path (asserting it answered: no pydantic, no typer) and on typer alone."""
    fast, imported = run_cli(home, *args, dump=tmp_path / "modules.json", forbidden=FAST_FORBIDDEN)
    assert imported == [], f"{args}: the fast path did not answer (imported {imported})"
    slow = run_typer(home, *args)
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr), args
    return fast


def test_status_and_list_print_what_typer_prints(compute_client: Client, tmp_path: Path) -> None:
    home = compute_client.home
    ok = compute_client.submit(JobSpec(argv=["sh", "-c", "echo hi"], labels={"team": "a"}))
    bad = compute_client.submit(JobSpec(argv=["sh", "-c", "echo boom >&2; exit 4"], name="bad"))
    compute_client.wait([ok.id, bad.id], timeout=60)
    hog = compute_client.submit(JobSpec(argv=["sleep", "60"], resources={"gpus": 4}, time_limit_s=600,
                                        preemptible=False))
    compute_client.wait_for_change([hog.id], timeout=60)  # running
    waiting = compute_client.submit(JobSpec(argv=["true"], resources={"gpus": 2}, priority="high"))
    for _ in range(300):  # until the daemon's pass wrote why it waits
        if compute_client.get(waiting.id).waiting_reason:
            break
        compute_client.wait_for_change([waiting.id], timeout=0.1)
    shown = json.loads(_same(home, tmp_path, "jobs", "status", waiting.id, "--json").stdout)
    assert shown["waiting_reason"] and shown["queue_position"] == 1 and shown["estimated_start"] is not None
    failed = json.loads(_same(home, tmp_path, "jobs", "status", bad.id, "--json").stdout)
    assert failed["attempts"][0]["exit_code"] == 4 and failed["attempts"][0]["failure_class"] == "user"
    _same(home, tmp_path, "jobs", "status", ok.id, "--json")
    missing = _same(home, tmp_path, "jobs", "status", "job-0000000000", "--json")
    assert missing.returncode == 2 and "no job 'job-0000000000'" in missing.stderr
    assert len(json.loads(_same(home, tmp_path, "jobs", "list", "--json").stdout)) == 4
    _same(home, tmp_path, "jobs", "list", "--state", "pending", "--state", "failed", "--json")
    assert [j["id"] for j in json.loads(_same(home, tmp_path, "jobs", "list", "--label", "team=a", "--limit", "1",
                                               "--json").stdout)] == [ok.id]
    assert _same(home, tmp_path, "jobs", "list", "--state", "done", "--json").returncode == 2
    assert _same(home, tmp_path, "jobs", "list", "--label", "novalue", "--json").returncode == 2
    assert _same(home, tmp_path, "jobs", "logs", ok.id).stdout == "hi\n"
    assert _same(home, tmp_path, "jobs", "logs", bad.id, "--tail", "1", "--attempt", "1").stdout == "boom\n"
    assert json.loads(_same(home, tmp_path, "jobs", "logs", ok.id, "--json").stdout)["text"] == "hi\n"
    assert "has not started" in _same(home, tmp_path, "jobs", "logs", waiting.id).stderr
    assert _same(home, tmp_path, "jobs", "logs", ok.id, "--attempt", "2").returncode == 2
    assert _same(home, tmp_path, "jobs", "logs", "job-0000000000", "--json").returncode == 2
    # with the daemon down, reads still come from the store, on the fast path
    stop_daemon(home)
    _same(home, tmp_path, "jobs", "status", waiting.id, "--json")
    _same(home, tmp_path, "jobs", "list", "--json")
    compute_client.cancel(hog.id)


@pytest.mark.parametrize("args", [
    ["--priority", "hgih"], ["--gpus", "9"], ["--time-limit", "-5"], ["--label", "novalue"],
    ["--runtime", "podman"], ["--data", "train=/does/not/exist"], ["--name", ""],
], ids=lambda a: " ".join(a))
def test_a_refused_submission_says_what_typer_says(compute_home: Path, tmp_path: Path, args: list[str]) -> None:
    refused = _same(compute_home, tmp_path, "jobs", "submit", *args, "--", "true")
    assert refused.returncode == 2 and refused.stderr.startswith("error: ") and refused.stdout == ""
    with Client(compute_home, autostart=False) as client:
        assert client.list() == []


def test_a_submission_through_the_daemon_is_the_job_typer_would_queue(compute_home: Path, tmp_path: Path) -> None:
    argv = ["jobs", "submit", "--dry-run", "--key", "exp/1", "--gpus", "1", "--label", "a=b", "--", "python", "t.py"]
    dry = json.loads(_same(compute_home, tmp_path, *argv).stdout)
    assert dry["dry_run"] is True and dry["spec"]["argv"][0].endswith("python")
    submit = ["jobs", "submit", "--key", "exp/1", "--gpus", "1", "--json", "--", "python", "-c", "pass"]
    fast, imported = run_cli(compute_home, *submit, dump=tmp_path / "m.json", forbidden=FAST_FORBIDDEN)
    assert fast.returncode == 0 and imported == [], fast.stderr
    again = run_typer(compute_home, *submit)  # the same key: the same job, with the same spec
    first, second = json.loads(fast.stdout), json.loads(again.stdout)
    assert (first["id"], first["spec"]) == (second["id"], second["spec"])
    assert first["spec"]["env"]["PATH"] and first["spec"]["cwd"] == dry["spec"]["cwd"]
    with Client(compute_home, autostart=False) as client:
        assert [j.id for j in client.list()] == [first["id"]]
        assert client.wait(first["id"], timeout=60)[0].state.value == "succeeded"


def test_without_a_daemon_submit_falls_back_to_typer_which_starts_one(compute_home: Path, tmp_path: Path) -> None:
    stop_daemon(compute_home)
    proc, imported = run_cli(compute_home, "jobs", "submit", "--", "true", dump=tmp_path / "m.json",
                             forbidden=("pydantic",))
    assert proc.returncode == 0 and imported == ["pydantic"], proc.stderr  # the typer path ran, and started one
    with Client(compute_home, autostart=False) as client:
        assert client.wait(proc.stdout.strip(), timeout=60)[0].state.value == "succeeded"


def test_a_request_nobody_answers_is_withdrawn(tmp_path: Path) -> None:
    paths = ComputePaths.of(tmp_path / "home")
    Store(paths).close()  # a store, no daemon
    conn = open_store(paths)
    assert conn is not None
    fields = {"argv": ["true"]}
    assert request(paths, conn, fields, Submitter.here(), give_up_s=0.05) is None
    assert conn.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM jobs").fetchone()[0] == 0


def test_a_store_made_before_the_submissions_table_gains_it(tmp_path: Path) -> None:
    paths = ComputePaths.of(tmp_path / "home")
    with closing(Store(paths)) as store:
        job_id = store.insert_job(JobSpec(argv=["true"]))
    conn = sqlite3.connect(paths.db)
    conn.execute("DROP TABLE submissions")
    conn.commit()
    conn.close()
    assert open_store(paths) is None  # the fast path leaves it to Store, which upgrades it
    with closing(Store(paths)) as store:
        assert store.get_job(job_id).id == job_id
    reader = open_store(paths)
    assert reader is not None and [v["id"] for v in job_views(reader, [job_id])] == [job_id]


def test_the_daemon_answers_a_request_it_cannot_read_with_a_fallback_not_a_job(tmp_path: Path) -> None:
    from compute.submission_answers import answer

    paths = ComputePaths.of(tmp_path / "home")
    with closing(Store(paths)) as store:
        good = {"fields": {"argv": ["true"], "name": "ok"}, "submitter": Submitter.here().as_dict(), "dry_run": False}
        with store.transaction() as conn:
            conn.execute("INSERT INTO submissions (request, created_at) VALUES (?, 0)", (json.dumps({"fields": {"argv": ["true"]}}),))
            conn.execute("INSERT INTO submissions (request, created_at) VALUES (?, 0)", (json.dumps(good),))
        assert answer(store) == 2
        replies = [json.loads(r["reply"]) for r in store.read("SELECT reply FROM submissions ORDER BY id")]
        assert "KeyError" in replies[0]["fallback"]
        assert [j.id for j in store.list_jobs()] == [replies[1]["job_id"]]
        assert store.get_job(replies[1]["job_id"]).spec.cwd == str(Path.cwd())


@pytest.mark.parametrize("args", [
    ["ui", "--host", "0.0.0.0"],           # not loopback, no token
    ["ui", "--port", "70000"],
    ["ui", "--token", "short"],
])  # fmt: skip
def test_ui_refuses_what_typer_refuses_without_importing_typer(tmp_path: Path, args: list[str]) -> None:
    """`autoresearch ui` starts on the fast path (its start-up is a target); a refusal is typer's, word for word."""
    env_home = tmp_path / "home"
    fast, imported = run_cli(env_home, *args, dump=tmp_path / "modules.json", forbidden=("typer",))  # (uvicorn imports click itself)
    assert imported == [], f"{args}: imported {imported}"
    slow = run_typer(env_home, *args)
    assert fast.returncode == slow.returncode == 2
    assert fast.stderr == slow.stderr and fast.stderr.startswith("error: --"), fast.stderr
