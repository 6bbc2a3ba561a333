"""`autoresearch mcp` driven by the real MCP client over stdio."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from compute import Client as ComputeClient
from tracking import TrackingConfig
from skills.builtin import builtin_registry
from skills.mcp_server import server_version

REPO = Path(__file__).resolve().parents[2]
TRAIN = """
import mlflow
with mlflow.start_run():
    mlflow.log_metric("acc", 0.75, step=3)
for step in range(5):
    print(f"step: {step} | loss: {5 - step}")
print("done")
"""


def mcp_server(home: Path, tracking: TrackingConfig, *options: str) -> StdioServerParameters:
    """`autoresearch mcp` on `home` and the test's MLflow store (with more `options`), for the stdio client."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-c", "import autoresearch.cli.mcp_cmd; from autoresearch.cli import app; app()", "mcp", "--home", str(home),
              "--tracking-uri", tracking.tracking_uri, "--max-bytes", "8000", *options],  # fmt: skip
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO), "AUTORESEARCH_HOME": str(home)},
        cwd=str(REPO),
    )


def test_mcp_server_over_stdio(
    compute_client: ComputeClient, tracking: TrackingConfig, experiment_name: str, tmp_path: Path
) -> None:
    asyncio.run(_session(mcp_server(compute_client.home, tracking), experiment_name, tmp_path))


async def _session(server: StdioServerParameters, experiment: str, workdir: Path) -> None:
    async with Client(server, read_timeout_seconds=120) as client:

        async def call(name: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
            result = await client.call_tool(name, arguments)
            data = json.loads(result.content[0].text)
            # an error carries no structuredContent (it would not match the outputSchema)
            assert result.structured_content == (None if result.is_error else data)
            return result.is_error, data

        info = client.server_info
        assert info.name == "autoresearch" and info.version == server_version()
        tools = (await client.list_tools()).tools
        expected = {t.name: t for t in builtin_registry().tooldefs()}
        assert [t.name for t in tools] == list(expected)
        assert all(t.input_schema == expected[t.name].parameters for t in tools)  # plain, not strict
        assert all(t.description == expected[t.name].description for t in tools)
        assert [t.name for t in tools if t.annotations.read_only_hint] == [
            "job_status", "list_jobs", "wait_for_jobs", "read_logs", "fetch_metrics", "cluster_status"]
        assert [t.name for t in tools if t.annotations.destructive_hint] == ["cancel_job"]
        assert "reason" not in by_name(tools, "cancel_job").input_schema.get("required", [])
        assert "tail" not in by_name(tools, "read_logs").input_schema.get("required", [])

        failed, submitted = await call(
            "submit_job",
            {"name": "mcp-train", "argv": [sys.executable, "-c", TRAIN], "cwd": str(workdir),
             "mlflow": {"experiment": experiment}},
        )  # fmt: skip
        assert not failed, submitted
        job_id = submitted["job"]["id"]

        states = {job_id: submitted["job"]["state"]}
        for _ in range(60):  # poll the way an agent would
            failed, waited = await call("wait_for_jobs", {"job_ids": [job_id], "since": states, "timeout_s": 10})
            assert not failed, waited
            states = waited["states"]
            if waited["all_final"]:
                break
        assert states == {job_id: "succeeded"}

        _, status = await call("job_status", {"job_id": job_id})
        assert status["job"]["exit_code"] == 0 and status["job"]["mlflow_run_id"] == submitted["mlflow_run_id"]

        _, logs = await call("read_logs", {"job_id": job_id, "tail": 2})
        assert logs["text"] == "step: 4 | loss: 1\ndone"

        _, metrics = await call("fetch_metrics", {"job_id": job_id})
        by_key = {m["key"]: m for m in metrics["metrics"]}
        assert by_key["acc"]["latest"] == {"value": 0.75, "step": 3, "nonfinite": None}
        assert by_key["loss"]["best"] == {"value": 1.0, "step": 4, "nonfinite": None}
        assert metrics["from_log"] == ["loss"] and metrics["status"] == "FINISHED"
        _, synced = await call("sync_metrics", {"job_id": job_id})
        assert synced["log_points_added"] == 5 and synced["status"] == "FINISHED"

        failed, error = await call("read_logs", {"job_id": job_id, "tail": "many"})
        assert failed and (error["error"], error["field"]) == ("invalid_arguments", "tail")
        failed, error = await call("job_status", {"job_id": "abc"})
        assert failed and error["message"] == "no job 'abc'. Job ids look like job-3f9a2c1b7d; list_jobs shows them"
        failed, error = await call("cluster_status", {"verbose": True})
        assert failed and error["field"] == "verbose"
        failed, logs = await call("read_logs", {"job_id": job_id, "tail": "2"})  # a number as a string is read
        assert not failed and logs["text"] == "step: 4 | loss: 1\ndone"
        failed, error = await call("submit_job", {"argv": ["true"], "gpus": True})  # a bool is not a number
        assert failed and error["field"] == "gpus"
        schema = by_name(tools, "submit_job").input_schema["properties"]["progress_timeout_s"]
        assert {"type": "number", "exclusiveMinimum": 0} in schema["anyOf"]
        failed, error = await call("submit_job", {"argv": ["true"], "progress_timeout_s": 0})
        assert failed and (error["error"], error["field"]) == ("invalid_arguments", "progress_timeout_s")


def by_name(tools: list[Any], name: str) -> Any:
    return next(t for t in tools if t.name == name)
