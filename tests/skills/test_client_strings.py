"""What MCP clients send as strings for fields that are not strings (`"3"`, `'["a"]'`, `"null"`: the
MCP Inspector before 2.x sends nullable and `anyOf` arguments so) is read as the JSON it spells, once
for every skill; a string that could mean itself stays a string, and bad values are still refused."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from mcp import Client

from compute import Client as ComputeClient
from skills.arguments import read_client_strings
from skills.builtin import builtin_registry
from tests.skills.test_mcp import mcp_server
from tracking import TrackingConfig

TRAIN = "print('loss: 2.0'); print('loss: 1.0')"


def test_string_encoded_numbers_lists_and_nulls_are_accepted_over_mcp(
    compute_client: ComputeClient, tracking: TrackingConfig, experiment_name: str, tmp_path: Path
) -> None:
    asyncio.run(_session(mcp_server(compute_client.home, tracking), experiment_name, tmp_path))


async def _session(server: Any, experiment: str, workdir: Path) -> None:
    async with Client(server, read_timeout_seconds=120) as client:

        async def call(name: str, arguments: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
            result = await client.call_tool(name, arguments)
            return result.is_error, json.loads(result.content[0].text)

        failed, submitted = await call("submit_job", {
            "argv": json.dumps([sys.executable, "-c", TRAIN]), "cwd": str(workdir), "gpus": "1",
            "time_limit_s": "300", "mlflow": json.dumps({"experiment": experiment}),
        })  # fmt: skip
        assert not failed, submitted
        job_id = submitted["job"]["id"]
        for _ in range(30):
            failed, waited = await call("wait_for_jobs", {"job_ids": json.dumps([job_id]), "timeout_s": "10"})
            assert not failed, waited
            if waited["all_final"]:
                break
        assert waited["states"] == {job_id: "succeeded"}, await call("job_status", {"job_id": job_id})

        failed, logs = await call("read_logs", {"job_id": job_id, "tail": "1", "attempt": ""})
        assert not failed and logs["text"] == "loss: 1.0", logs
        failed, metrics = await call("fetch_metrics", {"job_id": job_id, "keys": '["loss"]', "maximize": "null"})
        assert not failed and [m["key"] for m in metrics["metrics"]] == ["loss"], metrics
        failed, listed = await call("list_jobs", {"limit": "5", "min_priority": "0"})
        assert not failed and [j["id"] for j in listed["jobs"]] == [job_id], listed

        # what is not the JSON of a type the field takes is refused, the field named, as before
        for arguments, field in [({"tail": "many"}, "tail"), ({"tail": "2.5"}, "tail"), ({"tail": "true"}, "tail")]:
            failed, error = await call("read_logs", {"job_id": job_id, **arguments})
            assert failed and (error["error"], error["field"]) == ("invalid_arguments", field), error
        failed, error = await call("submit_job", {"argv": "python train.py"})  # a string argv stays a string
        assert failed and "argv is a string but shell is false" in error["message"], error


def test_strings_are_read_only_where_unambiguous() -> None:
    schemas = {skill.name: skill.tooldef.parameters for skill in builtin_registry()}
    read = read_client_strings(schemas["read_logs"], {"job_id": "123", "tail": "3", "grep": "null", "attempt": "null"})
    assert read == {"job_id": "123", "tail": 3, "grep": "null", "attempt": None}  # job_id and grep take strings
    read = read_client_strings(schemas["submit_job"], {"argv": '["python", "t.py"]', "priority": "75", "gpus": "1.5"})
    assert read == {"argv": ["python", "t.py"], "priority": "75", "gpus": "1.5"}  # priority takes names too
    read = read_client_strings(schemas["list_jobs"], {"states": '["running"]', "labels": '{"team": "a"}'})
    assert read == {"states": ["running"], "labels": {"team": "a"}}
