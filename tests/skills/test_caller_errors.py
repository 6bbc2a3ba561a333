"""Caller errors over `skills call` exit 2 with a message and no traceback; only unambiguous strings are read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from autoresearch.cli import app
from compute import Client
from skills import MAX_ARGUMENT_DEPTH, ErrorCode
from tracking import TrackingConfig

runner = CliRunner()
DEEP = '{"job_id": "job-0123456789", "tail": ' + "[" * 10_000 + "]" * 10_000 + "}"
NESTED = json.dumps({"job_ids": ["job-0123456789"], "since": {"a": json.loads("[" * 40 + "1" + "]" * 40)}})


@pytest.fixture
def call(compute_client: Client, tracking: TrackingConfig):
    def run(skill: str, arguments: str):
        args = ["skills", "call", skill, "--json", arguments, "--home", str(compute_client.home),
                "--tracking-uri", tracking.tracking_uri]
        result = runner.invoke(app, args)
        assert "Traceback" not in result.output
        return result.exit_code, json.loads(result.stdout), result.stderr

    return run


@pytest.mark.parametrize("skill, arguments, error, needle", [
    ("read_logs", DEEP, ErrorCode.invalid_json, f"more than {MAX_ARGUMENT_DEPTH} levels deep"),
    ("wait_for_jobs", NESTED, ErrorCode.invalid_json, "levels deep"),
    ("read_logs", '{"job_id": "job-0123456789", "tail": "five"}', ErrorCode.invalid_arguments, "tail"),
    ("submit_job", '{"argv": ["true"], "gpus": "1.5"}', ErrorCode.invalid_arguments, "gpus"),
    ("submit_job", '{"argv": ["true"], "gpus": true}', ErrorCode.invalid_arguments, "gpus"),
    ("submit_job", '{"argv": ["true"], "cwd": "/no/such/dir"}', ErrorCode.failed, "/no/such/dir is not a directory"),
    ("submit_job", '{"argv": ["true"], "gpus": 8}', ErrorCode.failed, "largest node"),
    ("job_status", '{"job_id": "job-0123456789"}', ErrorCode.not_found, "no job"),
    ("nope", "{}", ErrorCode.unknown_skill, "no skill 'nope'"),
    ("job_status", "[1, 2]", ErrorCode.invalid_json, "JSON object"),
    # issue 33 item 8: numbers are bounded where they are read, not overflowed deep in a store
    ("list_jobs", '{"offset": 100000000000000000000}', ErrorCode.invalid_arguments, "less than or equal to 9007199254740992"),
    ("read_logs", '{"job_id": "job-0123456789", "byte_start": 100000000000000000000}', ErrorCode.invalid_arguments, "byte_start"),
    ("read_logs", '{"job_id": "job-0123456789", "rank": 100000000000000000000}', ErrorCode.invalid_arguments, "rank"),
    ("submit_job", '{"argv": ["true"], "time_limit_s": Infinity}', ErrorCode.invalid_arguments, "finite number"),
])  # fmt: skip
def test_caller_errors_exit_2_with_the_field_named(call, skill, arguments, error, needle) -> None:
    code, output, stderr = call(skill, arguments)
    assert code == 2, (output, stderr)
    assert output["error"] == error.value and needle in output["message"]


def test_a_number_as_a_string_is_read_a_bool_is_refused(call, tmp_path: Path) -> None:
    code, output, _ = call("list_jobs", '{"limit": "5"}')
    assert code == 0 and output["jobs"] == []
    code, output, _ = call("list_jobs", '{"limit": true}')
    assert code == 2 and output["field"] == "limit"


@pytest.mark.parametrize("option, make, needle", [
    ("--home", lambda tmp: tmp / "file", "home '{tmp}/file' is a file, not a folder: pass --home a folder"),
    ("--home", lambda tmp: tmp / "file" / "sub", "home '{tmp}/file/sub' is under {tmp}/file, a file, not a folder"),
    ("--tracking-uri", lambda tmp: "garbage://x", "tracking store 'garbage://x' has the unknown scheme 'garbage': use sqlite:///"),
])  # fmt: skip
def test_bad_options_exit_2_saying_what_to_pass(option, make, needle, tmp_path: Path) -> None:
    """Issue 33 item 8: not NotADirectoryError or UnsupportedModelRegistryStoreURIException."""
    (tmp_path / "file").write_text("not a folder")
    args = ["skills", "call", "list_jobs", option, str(make(tmp_path))]
    if option != "--home":
        args += ["--home", str(tmp_path / "home")]
    result = runner.invoke(app, args, env={"COLUMNS": "400"})
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert needle.format(tmp=tmp_path) in " ".join(result.stderr.split())
    assert not (tmp_path / "home").exists()  # refused before a daemon was started
