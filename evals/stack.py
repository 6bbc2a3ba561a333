"""Arms that run through the full stack: `run_campaign` (LangGraph graph on its SQLite
checkpointer, Optuna RDB ledger, one MLflow run per trial, the compute daemon running each
trial as a subprocess whose printed metric lines are parsed from its log)."""

from __future__ import annotations

import time

from autoresearch.campaign import Campaign, Ledger
from autoresearch.policy import LLMPolicy
from autoresearch.runner import PolicyFactory, RunnerSettings, run_campaign, with_llm
from evals.env import EvalEnv
from evals.records import Arm, RunRecord, TrialPoint
from evals.scripted import scripted_provider
from evals.tasks import Task

RUNNER = RunnerSettings(poll_s=0.1, heartbeat_s=1.0)
"""Metric reads of running trials every 0.1 s (pruning decisions); job ends wake the runner at once."""
SCRIPTED = "scripted"


def policy_settings(arm: Arm, pruner: str, llm: str = SCRIPTED) -> dict[str, str]:
    """The campaign's `policy:` section for a stack arm. `llm`: "scripted" or "openai:MODEL" /
    "anthropic:MODEL" (a real provider; its key from OPENAI_API_KEY / ANTHROPIC_API_KEY)."""
    if arm is Arm.stack_optuna:
        return {"kind": "optuna", "sampler": "tpe", "pruner": pruner}
    if arm is not Arm.stack_llm:
        raise ValueError(f"{arm.value} is not a stack arm")
    if llm == SCRIPTED:
        return {"kind": "llm", "provider": "openai", "model": "scripted-local-search", "pruner": pruner}
    provider, _, model = llm.partition(":")
    if provider not in ("openai", "anthropic") or not model:
        raise ValueError(f"--llm {llm!r}: expected 'scripted', 'openai:MODEL' or 'anthropic:MODEL'")
    return {"kind": "llm", "provider": provider, "model": model, "pruner": pruner}


def scripted_llm(seed: int) -> PolicyFactory:
    """A policy factory under which `kind: llm` campaigns get the LLM policy driven by the scripted model."""
    return with_llm(lambda campaign, ledger: LLMPolicy(ledger, scripted_provider(ledger, seed)))


def run_stack(
    env: EvalEnv,
    task: Task,
    arm: Arm,
    seed: int,
    trials: int,
    slots: int,
    *,
    pruner: str = "none",
    target_regret: float | None = None,
    llm: str = SCRIPTED,
) -> RunRecord:
    """One campaign of `task` through the full stack; its trials as a RunRecord."""
    campaign = task.campaign(
        seed=seed, trials=trials, slots=slots, tracking_uri=env.tracking_uri,
        policy=policy_settings(arm, pruner, llm), target_regret=target_regret,
    )  # fmt: skip
    started = time.time()
    factory = scripted_llm(seed) if arm is Arm.stack_llm and llm == SCRIPTED else None
    run_campaign(campaign, home=env.home, settings=RUNNER, policy_factory=factory)
    wall = time.time() - started
    return record_of(env, task, campaign, arm, seed, started, wall, pruner=pruner, target_regret=target_regret)


def record_of(
    env: EvalEnv, task: Task, campaign: Campaign, arm: Arm, seed: int, started: float, wall: float,
    *, pruner: str = "none", target_regret: float | None = None,
) -> RunRecord:  # fmt: skip
    """A finished campaign's trials (from its ledger) and job times (from compute) as a RunRecord."""
    assert env.client is not None
    points, busy = [], 0.0
    for t in Ledger.load(campaign.name, env.home).trials():
        if t.state.value == "cancelled":
            continue
        steps = 0
        if t.job_id:
            busy += sum((a.ended_at or a.started_at) - a.started_at for a in env.client.get(t.job_id).attempts)
            log = env.client.log_path(t.job_id)
            steps = task.parse_output(log.read_text(errors="replace"))[0] if log.exists() else 0
        points.append(TrialPoint(
            number=t.number, state=t.state.value,
            value=task.to_min(t.value) if t.state.value == "complete" and t.value is not None else None,
            ended_s=t.ended_at.timestamp() - started if t.ended_at else None, steps=steps,
        ))  # fmt: skip
    return RunRecord(
        arm=arm, task=task.name, seed=seed, slots=campaign.budget.max_parallel, pruner=pruner,
        target_regret=target_regret, wall_s=wall, busy_s=busy,
        useful_s=sum(p.steps for p in points) * task.step_seconds if task.step_seconds else None, trials=points,
    )  # fmt: skip
