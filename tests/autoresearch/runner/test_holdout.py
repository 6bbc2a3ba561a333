"""The hidden holdout through the real runner, compute daemon, ledger and MLflow store: it runs as
a job of its own for the leaders when the campaign completes and its value is recorded (status,
report, MLflow), while no tool the policy or an MCP client can call, and no prompt the LLM
receives (the fake server's raw request bodies), carries it."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from scipy.stats import spearmanr
from starlette.testclient import TestClient

from autoresearch import api
from autoresearch.campaign import CampaignState, Ledger, TrialState
from autoresearch.cli.skills_cmds import cli_context
from autoresearch.llm import FakeLLMServer, FakeRequest, Reply
from autoresearch.policy import AgentContext, agent_registry
from autoresearch.policy.agent_skills import campaign_registry
from autoresearch.runner import run_campaign
from autoresearch.runner.display import render_status
from autoresearch.ui import UiSettings, create_app
from compute import Client
from skills import SkillContext, SkillError
from tracking import mlflow_client
from tests.autoresearch.conftest import FAST_LLM, KEY, Researcher, branin, llm_policy
from tests.autoresearch.runner.conftest import FAST, campaign_jobs, campaign_of, synthetic_config, write_config
from tests.autoresearch.runner.test_resume import start_runner

MARK = "0.123456"
"""The holdout value every holdout job prints: distinctive, so any leak of it is found."""
SHOWN = ("123456", "0.12346", "0.12345")
"""How MARK would look in any rendering (full, or cut to 5 significant digits)."""


def _holdout(command: str, **extra: Any) -> dict[str, Any]:
    return {"command": ["python", "-c", command], "metric": "holdout_objective", **extra}


def _hidden(text: str) -> bool:
    return not any(shown in text for shown in SHOWN)


class Watching:
    """A scripted researcher that also notes, at each request, how many holdout results the ledger held."""

    def __init__(self, name: str, home: Path, researcher: Researcher) -> None:
        self.name, self.home, self.researcher = name, home, researcher
        self.holdouts_seen: list[int] = []

    def __call__(self, req: FakeRequest) -> Reply:
        self.holdouts_seen.append(len(Ledger.load(self.name, self.home).facts().holdouts))
        return self.researcher(req)


def _tool_outputs(ctx: SkillContext, registry: Any, ledger: Ledger) -> list[str]:
    """Every read tool of `registry` on every trial (and each trial's run and job), as JSON."""
    calls: list[tuple[str, dict[str, Any]]] = [("list_trials", {"limit": 100}), ("best_trials", {"k": 50})]
    for t in ledger.trials():
        calls += [("trial_details", {"number": t.number, "max_points": 200}),
                  ("read_trial_logs", {"number": t.number, "tail": 2000}),
                  ("fetch_metrics", {"run_id": t.mlflow_run_id, "max_points": 500}),
                  ("fetch_metrics", {"job_id": t.job_id}),
                  ("fetch_metrics", {"run_id": t.mlflow_run_id, "keys": ["holdout/holdout_objective"]}),
                  ("job_status", {"job_id": t.job_id})]  # fmt: skip
    outputs = []
    for name, args in calls:
        out = registry.call(name, args, ctx)
        assert not isinstance(out, SkillError), (name, args, out)
        outputs.append(json.dumps(out.model_dump(mode="json")))
    return outputs


def test_the_holdout_is_recorded_for_every_trial_yet_never_reaches_the_llm(llm_env: Path, tracking) -> None:
    points = [{"x1": 3.0, "x2": 2.5}, {"x1": 9.0, "x2": 2.0}, {"x1": -3.0, "x2": 12.0}, {"x1": 3.2, "x2": 2.3}]
    name = "holdout-llm"
    script = Watching(name, llm_env, Researcher(points))
    with FakeLLMServer(script, api_key=KEY) as server:
        campaign = branin(
            name=name, policy=llm_policy(server, "openai"), tracking={"uri": tracking.tracking_uri},
            budget={"max_trials": 4, "max_parallel": 1},
            objective={"metric": "objective", "mode": "min",
                       "holdout": _holdout(f"print('holdout_objective: {MARK}')", every=True)},
        )  # fmt: skip
        outcome = run_campaign(campaign, home=llm_env, settings=FAST, policy_factory=FAST_LLM)

    assert outcome.state is CampaignState.completed, outcome.reason
    ledger = Ledger.load(name, llm_env)
    trials = ledger.trials()
    results = {r.trial: r for r in ledger.facts().holdouts}
    assert sorted(results) == [t.number for t in trials] and all(r.value == float(MARK) for r in results.values())
    assert not {r.job_id for r in results.values()} & {t.job_id for t in trials}  # jobs of their own
    assert max(script.holdouts_seen) >= 1, "no model call came after a holdout was recorded: the check proves nothing"
    bodies = [r.body for r in server.requests]
    assert bodies and all(_hidden(body) for body in bodies), "the holdout value reached the LLM's prompt"
    assert all(_hidden(n.text) for n in ledger.notes())
    run = mlflow_client(tracking).get_run(trials[0].mlflow_run_id)
    assert run.data.metrics["holdout/holdout_objective"] == float(MARK)  # people see it in MLflow

    base = SkillContext.create(home=llm_env, tracking_uri=tracking.tracking_uri)
    agent = AgentContext(home=base.home, tracking=base.tracking, ledger=ledger)
    mcp = cli_context(llm_env, None, 1_000_000, name)
    outputs = [*_tool_outputs(agent, agent_registry(), ledger), *_tool_outputs(mcp, campaign_registry(), ledger)]
    assert all(_hidden(text) for text in outputs), next(t for t in outputs if not _hidden(t))
    asked = agent_registry().call("fetch_metrics", {"run_id": trials[0].mlflow_run_id,
                                                    "keys": ["holdout/holdout_objective"]}, agent)  # fmt: skip
    assert asked.missing == ["holdout/holdout_objective"] and asked.metrics == []


def test_the_leaders_get_a_holdout_when_the_campaign_completes(compute_home: Path, tracking) -> None:
    holdout = {"command": ["python", "-c", "import sys; print('holdout_objective:', sys.argv[1])", "{x1}"],
               "metric": "holdout_objective", "top_k": 3}  # the holdout value is the trial's x1
    campaign = campaign_of(synthetic_config(tracking, budget={"max_trials": 5, "max_parallel": 2},
                                            objective={"holdout": holdout}))  # fmt: skip

    outcome = run_campaign(campaign, home=compute_home, settings=FAST)

    assert outcome.state is CampaignState.completed, outcome.reason
    ledger = Ledger.load(campaign.name, compute_home)
    leaders = sorted((t for t in ledger.trials() if t.state is TrialState.complete), key=lambda t: t.value)[:3]
    results = {r.trial: r for r in ledger.facts().holdouts}
    assert sorted(results) == sorted(t.number for t in leaders)  # the top 3 only
    assert all(results[t.number].value == t.params["x1"] for t in leaders)
    summary = outcome.status.holdout
    assert summary is not None and [r.trial for r in summary.rows] == [t.number for t in leaders]
    expected = spearmanr([t.value for t in leaders], [t.params["x1"] for t in leaders]).statistic
    assert summary.spearman == pytest.approx(expected)
    gap = sum(t.params["x1"] for t in leaders) / 3 - sum(t.value for t in leaders) / 3  # mode min: holdout - validation
    assert summary.gap == pytest.approx(gap)
    run = mlflow_client(tracking).get_run(leaders[0].mlflow_run_id)
    assert run.data.metrics["holdout/holdout_objective"] == leaders[0].params["x1"]
    report = Path(api.report(campaign.name, home=compute_home)).read_text()
    assert "## Holdout" in report and f"Spearman rank correlation of validation and holdout: **{expected:+.3f}**" in report
    with TestClient(create_app(UiSettings(home=compute_home), warm=False), base_url="http://127.0.0.1") as web:
        page = web.get(f"/campaigns/{campaign.name}").text
    assert '<table id="holdout">' in page and f"<b>{expected:+.3f}</b>" in page
    console = Console(record=True, width=400)
    console.print(render_status(outcome.status, campaign.budget.max_trials))
    assert f"Spearman {expected:+.3f}; overfitting gap {gap:+.6g}" in console.export_text()
    holdout_jobs = [j for j in campaign_jobs(Client(compute_home), campaign.name) if "holdout_of" in j.spec.labels]
    assert sorted(int(j.spec.labels["holdout_of"]) for j in holdout_jobs) == sorted(results)
    again = run_campaign(campaign, home=compute_home, settings=FAST)  # nothing to run: no second holdout job
    assert again.already_ended and Ledger.load(campaign.name, compute_home).facts().holdouts == ledger.facts().holdouts


def test_a_runner_killed_while_the_holdout_runs_resumes_with_the_same_holdout_jobs(compute_client, tracking,
                                                                                   tmp_path: Path) -> None:
    holdout = {"command": ["python", "-c", "import sys; print('holdout_objective:', sys.argv[1])", "{x2}"],
               "metric": "holdout_objective", "top_k": 2}  # fmt: skip
    data = synthetic_config(tracking, budget={"max_trials": 3, "max_parallel": 3}, objective={"holdout": holdout})
    config = write_config(tmp_path, data)

    killed = start_runner(config, crash_at="holdout.submitted")
    assert killed.wait(timeout=120) == -signal.SIGKILL, killed.stdout.read() if killed.stdout else ""
    assert Ledger.load(data["name"]).facts().holdouts == ()
    resumed = start_runner(config)
    assert resumed.wait(timeout=120) == 0, resumed.stdout.read() if resumed.stdout else ""

    ledger = Ledger.load(data["name"])
    assert ledger.state is CampaignState.completed
    leaders = sorted((t for t in ledger.trials() if t.state is TrialState.complete), key=lambda t: t.value)[:2]
    results = {r.trial: r for r in ledger.facts().holdouts}
    assert sorted(results) == sorted(t.number for t in leaders)
    assert all(results[t.number].value == t.params["x2"] for t in leaders)
    holdout_jobs = [j for j in campaign_jobs(compute_client, data["name"]) if "holdout_of" in j.spec.labels]
    assert sorted(j.id for j in holdout_jobs) == sorted(r.job_id for r in results.values())  # none twice


def test_the_compute_skills_withhold_the_holdout_job_from_agents_and_mcp(compute_home: Path, tracking) -> None:
    holdout = _holdout(f"print('holdout_objective: {MARK}')", top_k=2)
    campaign = campaign_of(synthetic_config(tracking, budget={"max_trials": 3, "max_parallel": 3},
                                            objective={"holdout": holdout}))  # fmt: skip
    assert run_campaign(campaign, home=compute_home, settings=FAST).state is CampaignState.completed
    ledger = Ledger.load(campaign.name, compute_home)
    hidden_ids = {r.job_id for r in ledger.facts().holdouts}
    trial_ids = {t.job_id for t in ledger.trials()}
    assert len(hidden_ids) == 2 and len(trial_ids) == 3
    assert all(j.state.value == "succeeded" for j in Client(compute_home).list(labels={"holdout_of": "0"}) + [
        Client(compute_home).get(i) for i in hidden_ids])  # the holdout jobs ran and wrote their logs

    mcp = cli_context(compute_home, None, 1_000_000, campaign.name)  # what `mcp --campaign` and `skills` serve
    registry = campaign_registry()
    listed = [registry.call("list_jobs", args, mcp) for args in
              ({}, {"labels": {"campaign": campaign.name}}, {"labels": {"holdout_of": "0"}}, {"states": ["succeeded"]})]
    assert {j.id for j in listed[0].jobs} == {j.id for j in listed[1].jobs} == trial_ids  # trials: all there
    assert listed[2].jobs == [] and {j.id for j in listed[3].jobs} == trial_ids
    pages, offset = [], 0  # one job a page: every visible job once, no hidden one, and an end
    while offset is not None:
        page = registry.call("list_jobs", {"limit": 1, "offset": offset}, mcp)
        pages += [j.id for j in page.jobs]
        offset = page.next_offset
    assert sorted(pages) == sorted(trial_ids)
    for job_id in hidden_ids:
        for name, args in (("read_logs", {"job_id": job_id, "tail": 100}), ("read_logs", {"job_id": job_id, "grep": "."}),
                           ("job_status", {"job_id": job_id}), ("fetch_metrics", {"job_id": job_id}),
                           ("wait_for_jobs", {"job_ids": [job_id], "timeout_s": 0}),
                           ("cancel_job", {"job_id": job_id})):  # fmt: skip
            out = registry.call(name, args, mcp)
            assert isinstance(out, SkillError), (name, out)
            assert "hidden holdout" in out.message and _hidden(out.message), out.message
    outputs = [json.dumps(o.model_dump(mode="json")) for o in listed]
    assert all(_hidden(text) and not any(i in text for i in hidden_ids) for text in outputs)

    from mcp import Client as McpClient
    from tests.skills.test_mcp import mcp_server

    async def over_mcp() -> list[tuple[bool, str]]:
        async with McpClient(mcp_server(compute_home, tracking, "--campaign", campaign.name),
                             read_timeout_seconds=120) as client:  # fmt: skip
            return [(r.is_error, r.content[0].text) for r in [
                await client.call_tool("list_jobs", {}),
                *[await client.call_tool("read_logs", {"job_id": i}) for i in sorted(hidden_ids)]]]

    import asyncio

    (listed_err, listed_text), *logs = asyncio.run(over_mcp())
    assert not listed_err and all(i in listed_text for i in trial_ids) and not any(i in listed_text for i in hidden_ids)
    assert all(err and "hidden holdout" in text and _hidden(text) for err, text in logs), logs
