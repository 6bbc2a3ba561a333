"""`autoresearch mcp` through the official TypeScript client (the MCP Inspector CLI from npm):
the success and the error path of every tool, as Claude Code and the Inspector see them (the pinned
release, on node >= 22.19); and the arguments the release node 20 users get sends as strings.

Without node and npm, or (for the pinned release) without node >= 22.19, the tests skip; with
AR_REQUIRE_INSPECTOR=1 (set by .ci/run, which installs both) they fail instead: CI must run them."""

from __future__ import annotations

import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from compute import Client, JobSpec
from tracking import TrackingConfig
from skills.builtin import builtin_registry
from tests.skills.inspector import (
    INSPECTOR_PACKAGE,
    MIN_NODE,
    NODE20_INSPECTOR_PACKAGE,
    NODE_PACKAGE,
    inspect,
    node_version,
    npx,
)

_REQUIRED = os.environ.get("AR_REQUIRE_INSPECTOR") == "1"
_NODE = node_version() if npx() else ()
pytestmark = pytest.mark.skipif(npx() is None and not _REQUIRED, reason="needs node and npm (.ci/run installs them)")
needs_new_node = pytest.mark.skipif(
    _NODE < MIN_NODE and not _REQUIRED,
    reason=f"{INSPECTOR_PACKAGE} needs node >= {'.'.join(map(str, MIN_NODE))}, PATH has {_NODE or 'none'}: "
    f"`npm install --prefix .venv/node {NODE_PACKAGE}` and put .venv/node/node_modules/.bin first on PATH (.ci/run does)",
)


@needs_new_node
@pytest.mark.timeout(1200)  # 17 Inspector runs, each a node and a python start
def test_every_tool_succeeds_and_fails_in_the_typescript_client(
    compute_client: Client, tracking: TrackingConfig, experiment_name: str, tmp_path: Path
) -> None:
    assert _NODE >= MIN_NODE, f"{INSPECTOR_PACKAGE} needs node >= {MIN_NODE}; PATH has {_NODE or 'none'}"
    home, uri = compute_client.home, tracking.tracking_uri
    done = compute_client.submit(JobSpec(argv=["sh", "-c", "echo 'loss: 1.5'; echo done"], cwd=str(tmp_path)))
    sleeper = compute_client.submit(JobSpec(argv=["sleep", "120"], cwd=str(tmp_path)))
    compute_client.wait(done.id, timeout=60)
    argv = json.dumps([sys.executable, "-c", "print('loss: 2.0')"])
    calls = {
        "list": ("tools/list", None, {}),
        "submit_job ok": ("tools/call", "submit_job", {"argv": argv, "cwd": str(tmp_path),
                                                       "mlflow": json.dumps({"experiment": experiment_name})}),
        "submit_job bad": ("tools/call", "submit_job", {"argv": '["true"]', "gpus": "999"}),
        "job_status ok": ("tools/call", "job_status", {"job_id": done.id}),
        "job_status bad": ("tools/call", "job_status", {"job_id": "job-doesnotexist"}),
        "list_jobs ok": ("tools/call", "list_jobs", {"limit": "5"}),
        "list_jobs bad": ("tools/call", "list_jobs", {"limit": "0"}),
        "cancel_job ok": ("tools/call", "cancel_job", {"job_id": sleeper.id, "reason": "inspector"}),
        "cancel_job bad": ("tools/call", "cancel_job", {"job_id": "job-doesnotexist"}),
        "wait_for_jobs ok": ("tools/call", "wait_for_jobs", {"job_ids": json.dumps([done.id]), "timeout_s": "5"}),
        "wait_for_jobs bad": ("tools/call", "wait_for_jobs", {"job_ids": '["job-doesnotexist"]', "timeout_s": "1"}),
        "read_logs ok": ("tools/call", "read_logs", {"job_id": done.id, "tail": "1"}),
        "read_logs bad": ("tools/call", "read_logs", {"job_id": "job-doesnotexist"}),
        "fetch_metrics bad": ("tools/call", "fetch_metrics", {"run_id": "0123456789abcdef"}),
        "sync_metrics bad": ("tools/call", "sync_metrics", {"job_id": done.id}),  # a job without a run
        "cluster_status ok": ("tools/call", "cluster_status", {}),
        "cluster_status bad": ("tools/call", "cluster_status", {"verbose": "true"}),
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(inspect, home, uri, method, tool, args) for name, (method, tool, args) in calls.items()}
        results = {name: future.result() for name, future in futures.items()}

    _, listed = results.pop("list")
    expected = {t.name: t for t in builtin_registry().tooldefs()}
    assert [t["name"] for t in listed["tools"]] == list(expected)
    for tool in listed["tools"]:
        assert tool["inputSchema"] == expected[tool["name"]].parameters  # plain JSON Schema
        assert set(tool["annotations"]) >= {"readOnlyHint", "destructiveHint", "idempotentHint"}
        assert "outputSchema" in tool

    seen = set()
    for name, (code, result) in results.items():
        tool, outcome = name.split()
        seen.add(tool)
        text = json.loads(result["content"][0]["text"])
        if outcome == "ok":
            assert code == 0 and result["isError"] is False, (name, result)
            assert result["structuredContent"] == text
        else:  # our own message, not the client's "Structured content does not match ..."
            assert result["isError"] is True and "structuredContent" not in result, (name, result)
            assert text["skill"] == tool and text["message"] and "does not match" not in json.dumps(result)
    assert seen == set(expected)  # every tool's error path (and below, each success path)
    assert results["job_status bad"][1]["content"][0]["text"].count("no job 'job-doesnotexist'") == 1
    assert json.loads(results["submit_job bad"][1]["content"][0]["text"])["field"] == "gpus"
    assert json.loads(results["list_jobs ok"][1]["content"][0]["text"])["jobs"]

    # fetch_metrics' success path: a job tied to an MLflow run (submitted above through the inspector)
    submitted = json.loads(results["submit_job ok"][1]["content"][0]["text"])
    compute_client.wait(submitted["job"]["id"], timeout=120)
    code, metrics = inspect(home, uri, "tools/call", "fetch_metrics", {"job_id": submitted["job"]["id"]})
    assert code == 0 and metrics["isError"] is False, metrics
    assert [m["key"] for m in metrics["structuredContent"]["metrics"]] == ["loss"]
    code, synced = inspect(home, uri, "tools/call", "sync_metrics", {"job_id": submitted["job"]["id"]})
    assert code == 0 and synced["isError"] is False, synced
    assert synced["structuredContent"]["log_points_added"] == 1 and synced["structuredContent"]["status"] == "FINISHED"


@pytest.mark.timeout(1200)
def test_the_node20_inspector_sends_nullable_and_anyof_arguments_as_strings_and_they_are_read(
    compute_client: Client, tracking: TrackingConfig, experiment_name: str, tmp_path: Path
) -> None:
    home, uri = compute_client.home, tracking.tracking_uri
    done = compute_client.submit(JobSpec(argv=["sh", "-c", "echo 'loss: 1.5'; echo 'loss: 1.25'"], cwd=str(tmp_path)))
    compute_client.wait(done.id, timeout=60)
    calls = {  # every value below reaches the server as a string
        "read_logs": {"job_id": done.id, "tail": "1", "attempt": "1"},  # integer | null
        "list_jobs": {"limit": "5", "min_priority": "0", "states": '["succeeded"]'},  # a list | null
        "wait_for_jobs": {"job_ids": json.dumps([done.id]), "timeout_s": "5"},
        "submit_job": {"argv": json.dumps([sys.executable, "-c", "print('loss: 2.0')"]), "cwd": str(tmp_path),
                       "mlflow": json.dumps({"experiment": experiment_name}), "time_limit_s": "600"},
    }  # fmt: skip
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {tool: pool.submit(inspect, home, uri, "tools/call", tool, args, NODE20_INSPECTOR_PACKAGE)
                   for tool, args in calls.items()}  # fmt: skip
        results = {tool: future.result() for tool, future in futures.items()}
    for tool, (code, result) in results.items():
        assert code == 0 and result["isError"] is False, (tool, result)
    output = {tool: json.loads(result["content"][0]["text"]) for tool, (_, result) in results.items()}
    assert output["read_logs"]["text"] == "loss: 1.25"
    assert done.id in [job["id"] for job in output["list_jobs"]["jobs"]]
    assert output["wait_for_jobs"]["states"] == {done.id: "succeeded"}

    job_id = output["submit_job"]["job"]["id"]
    compute_client.wait(job_id, timeout=120)
    code, metrics = inspect(home, uri, "tools/call", "fetch_metrics", {"job_id": job_id, "keys": '["loss"]'},
                            NODE20_INSPECTOR_PACKAGE)  # fmt: skip
    assert code == 0 and metrics["isError"] is False, metrics
    assert [m["key"] for m in json.loads(metrics["content"][0]["text"])["metrics"]] == ["loss"]
