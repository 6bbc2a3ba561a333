"""`--campaign NAME` on `autoresearch skills list|call` and `autoresearch mcp`: the campaign's
read-only trial skills for people and outside agents (the real MCP client over stdio)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from click.testing import CliRunner

import autoresearch.cli.skills_cmds  # noqa: F401 - registers `skills`
from autoresearch.campaign import Ledger, Proposal
from autoresearch.cli import app
from autoresearch.chat.steering_skills import steering_registry
from autoresearch.policy.agent_skills import CAMPAIGN_SKILLS
from skills.builtin import builtin_registry
from tests.autoresearch.campaign.conftest import make_campaign, toy_objective

REPO = Path(__file__).resolve().parents[3]
POINTS = [{"x": 4.0, "y": 9, "kind": "a"}, {"x": 1.0, "y": 3, "kind": "b"}, {"x": 0.0, "y": 2, "kind": "c"}]
runner = CliRunner()
STEERING = steering_registry("toy").names()


def _ledger(base: Path) -> Ledger:
    ledger = Ledger.open(make_campaign(base))
    for params in POINTS:
        number = ledger.admit(Proposal(params=params, rationale="by hand")).trial_number
        ledger.mark_launched(number, f"job-{number:010d}")
        ledger.complete(number, toy_objective(params))
    return ledger


def test_skills_list_and_call_with_a_campaign(home: Path, tmp_path: Path) -> None:
    _ledger(tmp_path)
    names = [line.split()[0] for line in runner.invoke(app, ["skills", "list", "--campaign", "toy"]).stdout.splitlines()]
    assert names == builtin_registry().names() + [fn.__name__ for fn in CAMPAIGN_SKILLS] + STEERING
    assert "propose_trials" not in names  # the policy's finish skills stay inside the policy

    best = runner.invoke(app, ["skills", "call", "best_trials", "--campaign", "toy", "--json", '{"k": 2}'])
    assert best.exit_code == 0, best.stderr
    rows = json.loads(best.stdout)["trials"]
    assert [(r["number"], r["value"]) for r in rows] == [(1, 10.0), (2, toy_objective(POINTS[2]))]

    missing = runner.invoke(app, ["skills", "call", "best_trials", "--campaign", "nope", "--json", "{}"])
    assert missing.exit_code == 2 and "no campaign named 'nope'" in missing.stderr and "toy" in missing.stderr
    without = runner.invoke(app, ["skills", "call", "best_trials", "--json", "{}"])
    assert without.exit_code == 2 and "unknown_skill" in without.stdout  # not offered without --campaign


def test_mcp_with_a_campaign_serves_its_trial_skills(home: Path, tmp_path: Path) -> None:
    _ledger(tmp_path)
    server = StdioServerParameters(
        command=sys.executable,
        args=["-c", "import autoresearch.cli.mcp_cmd; from autoresearch.cli import app; app()", "mcp",
              "--campaign", "toy"],  # fmt: skip
        env={"PATH": os.environ["PATH"], "PYTHONPATH": str(REPO), "AUTORESEARCH_HOME": str(home)},
        cwd=str(REPO),
    )

    async def session() -> None:
        async with Client(server, read_timeout_seconds=120) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            assert tools == builtin_registry().names() + [fn.__name__ for fn in CAMPAIGN_SKILLS] + STEERING
            result = await client.call_tool("trial_details", {"number": 1})
            assert not result.is_error and result.structured_content["trial"]["params"] == POINTS[1]
            result = await client.call_tool("suggest_with_optuna", {"n": 2})
            assert not result.is_error and result.structured_content["based_on"] == 3
            assert len(result.structured_content["suggestions"]) == 2
            result = await client.call_tool("compare_trials", {"numbers": [1, 2]})
            diff = result.structured_content["comparison"]["differing_params"]
            assert not result.is_error and [d["name"] for d in diff] == ["kind", "x", "y"]

    asyncio.run(session())
    assert len(Ledger.load("toy").trials()) == 3  # suggesting cost no trial
