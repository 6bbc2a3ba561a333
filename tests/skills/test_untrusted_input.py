"""Untrusted input to skills: a catastrophic regex is bounded and never stalls the MCP server;
a job's credentials (named in secret_env) are redacted from the logs read back."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from mcp import Client

from compute import Client as ComputeClient
from compute.log_secrets import mask
from skills import ErrorCode, SkillContext
from tracking import TrackingConfig
from tests.skills.test_job_skills import call, wait_final
from tests.skills.test_mcp import mcp_server

BACKTRACK = r"^(a+)+$"
"""Exponential in plain `re` on `aaa...!` lines: it never answers."""
LONG_LINES = "for _ in range(400): print('a' * 3000 + '!')"


@pytest.fixture
def aaa_job(ctx: SkillContext, tmp_path: Path) -> str:
    job = call(ctx, "submit_job", argv=[sys.executable, "-c", LONG_LINES], cwd=str(tmp_path)).job
    wait_final(ctx, job.id)
    return job.id


def test_a_backtracking_grep_ends_with_an_error_naming_the_field(ctx: SkillContext, aaa_job: str) -> None:
    out = call(ctx, "read_logs", job_id=aaa_job, grep=BACKTRACK)

    assert (out.error, out.field) == (ErrorCode.invalid_arguments, "grep")
    assert "took more than" in out.message and "simpler regex" in out.message
    assert call(ctx, "read_logs", job_id=aaa_job, grep="a!$", max_matches=1).matches == 400  # plain greps work


def test_a_slow_call_does_not_block_the_mcp_server(
    compute_client: ComputeClient, tracking: TrackingConfig, ctx: SkillContext, aaa_job: str
) -> None:
    async def session() -> list[str]:
        done: list[str] = []
        async with Client(mcp_server(compute_client.home, tracking), read_timeout_seconds=120) as client:

            async def slow() -> None:
                result = await client.call_tool("read_logs", {"job_id": aaa_job, "grep": BACKTRACK})
                assert result.is_error and json.loads(result.content[0].text)["field"] == "grep"
                done.append("grep")

            async def quick() -> None:
                await asyncio.sleep(0.2)  # the grep is running by now
                result = await client.call_tool("job_status", {"job_id": aaa_job})
                assert not result.is_error and json.loads(result.content[0].text)["job"]["id"] == aaa_job
                done.append("status")

            await asyncio.gather(slow(), quick())
        return done

    assert asyncio.run(session()) == ["status", "grep"]


def test_secret_env_reaches_the_job_by_name_and_is_redacted_from_its_log(
    start_compute, tracking: TrackingConfig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AR_TEST_HF_TOKEN", "hf_not-a-real-token-7c2d")  # in the daemon's environment
    client = start_compute()
    ctx = SkillContext(home=client.home, tracking=tracking, client_factory=lambda: client)
    show = "import os; print('token', os.environ.get('AR_TEST_HF_TOKEN'))"
    named = call(ctx, "submit_job", argv=[sys.executable, "-c", show], cwd=str(tmp_path),
                 secret_env=["AR_TEST_HF_TOKEN"]).job  # fmt: skip
    unnamed = call(ctx, "submit_job", argv=[sys.executable, "-c", show], cwd=str(tmp_path)).job
    wait_final(ctx, named.id)
    wait_final(ctx, unnamed.id)

    hidden = mask(len("hf_not-a-real-token-7c2d")).decode()  # masked by the daemon, in the file itself
    monkeypatch.delenv("AR_TEST_HF_TOKEN")  # a reader without the value
    assert call(ctx, "read_logs", job_id=named.id).text == f"token {hidden}"
    assert call(ctx, "read_logs", job_id=unnamed.id).text == "token None"  # not on the allowlist
    assert "hf_not-a-real-token" not in client.get(named.id).spec.model_dump_json()
    assert client.log_path(named.id).read_text() == f"token {hidden}\n"  # the job did get it: its mask is there


@pytest.mark.parametrize(
    "arguments, field, expected",
    [
        ({"argv": ["python", "a\x00b"]}, "argv", "contains a NUL byte"),
        ({"argv": ["true"], "env": {"-i": "1"}}, "env", "must not start with '-'"),
        ({"argv": ["true"], "labels": {"a\nb": "1"}}, "labels", "contains a control character"),
        ({"argv": ["true"], "secret_env": ["A-B"]}, "secret_env", "must be a variable name"),
    ],
)
def test_submit_job_refuses_injection_before_any_daemon(
    tmp_path: Path, tracking: TrackingConfig, arguments: dict, field: str, expected: str
) -> None:
    ctx = SkillContext(home=tmp_path / "home", tracking=tracking)
    from skills.builtin import builtin_registry

    out = builtin_registry().call("submit_job", arguments, ctx)

    assert (out.error, out.field) == (ErrorCode.invalid_arguments, field) and expected in out.message
    assert not (tmp_path / "home").exists()
