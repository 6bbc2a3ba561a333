"""Fixtures: campaigns on a temp AUTORESEARCH_HOME, a tiny code-edit project, and scripted
researchers that answer through the fake wire server (real OpenAI and Anthropic SDK clients)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from autoresearch.campaign import Campaign, Ledger
from autoresearch.llm import (
    AnthropicProvider,
    FakeLLMServer,
    FakeRequest,
    Message,
    OpenAIProvider,
    Reply,
    RetryPolicy,
    Role,
    SDKProvider,
    ToolCall,
)
from autoresearch.policy import build_llm_policy
from autoresearch.runner import PolicyFactory, with_llm

KEY = "sk-test-policy-9c1d7e3a5b"
"""The key the fake server wants; must never show up in logs, MLflow or reports."""
KEY_ENV = "AR_TEST_POLICY_KEY"
FAST = RetryPolicy(
    max_attempts=3, initial_wait_s=0.001, max_wait_s=0.01, jitter_s=0.001, max_total_s=60, request_timeout_s=30
)
FAST_LLM: PolicyFactory = with_llm(lambda campaign, ledger: build_llm_policy(campaign, ledger, retry=FAST))
"""The runner's policy factory in these tests: the LLM policy with fast retries."""
REPO = Path(__file__).resolve().parents[2]
SYNTHETIC = REPO / "examples" / "synthetic"

TRAIN = '''\
"""A toy training job: prints `loss: X`; the patch under test changes RATE."""
import sys

from evaluation import score

RATE = 1.0
seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 0
print("step: 1")
print(f"loss: {score(RATE, seed)}")
'''
EVALUATION = '''\
"""FIXED: the evaluation every trial is judged by."""


def score(rate, seed):
    return (rate - 3.0) ** 2 + 0.001 * (seed % 3)
'''


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "arhome"
    monkeypatch.setenv("AUTORESEARCH_HOME", str(path))
    monkeypatch.setenv(KEY_ENV, KEY)
    return path


@pytest.fixture
def toy_project(tmp_path: Path) -> Path:
    """train.py (editable), evaluation.py (fixed), data/ (shared, symlinked into workspaces)."""
    root = tmp_path / "toy"
    (root / "data").mkdir(parents=True)
    (root / "data" / "corpus.txt").write_text("hello\n")
    (root / "train.py").write_text(TRAIN)
    (root / "evaluation.py").write_text(EVALUATION)
    return root


def branin(name: str = "branin", **overrides: Any) -> Campaign:
    """A Branin campaign on the synthetic job (2 float parameters)."""
    data: dict[str, Any] = {
        "name": name,
        "command": ["python", "job.py", "--function", "branin", "--x1", "{x1}", "--x2", "{x2}",
                    "--steps", "3", "--step-seconds", "0.01", "--no-mlflow"],
        "cwd": str(SYNTHETIC),
        "objective": {"metric": "objective", "mode": "min"},
        "search_space": {"x1": {"type": "float", "low": -5.0, "high": 10.0},
                         "x2": {"type": "float", "low": 0.0, "high": 15.0}},
        "budget": {"max_trials": 6, "max_parallel": 2},
        "policy": {"kind": "llm", "provider": "openai", "model": "gpt-4.1-mini", "api_key_env": KEY_ENV,
                   "pruner": "none", "seed": 3},
    }  # fmt: skip
    data.update(overrides)
    return Campaign.model_validate(data, context={"base_dir": SYNTHETIC})


def toy_campaign(project: Path, name: str = "toy", **overrides: Any) -> Campaign:
    """A code-edit campaign on the toy project: no search space, train.py editable."""
    data: dict[str, Any] = {
        "name": name,
        "command": ["python", "train.py", "--seed", "{seed}"],
        "cwd": str(project),
        "objective": {"metric": "loss", "mode": "min"},
        "code": {"editable": ["train.py"], "fixed": ["evaluation.py"]},
        "budget": {"max_trials": 4, "max_parallel": 1},
        "policy": {"kind": "llm", "provider": "anthropic", "model": "claude-sonnet-4-5", "api_key_env": KEY_ENV,
                   "pruner": "none"},
    }  # fmt: skip
    data.update(overrides)
    return Campaign.model_validate(data, context={"base_dir": project})


def rate_patch(old: str, new: str, path: str = "train.py") -> str:
    return f"{path}\n<<<<<<< SEARCH\nRATE = {old}\n=======\nRATE = {new}\n>>>>>>> REPLACE\n"


def first_user(messages: list[Message]) -> str:
    return next(m.content for m in messages if m.role is Role.USER)


def slots(messages: list[Message]) -> int:
    """How many trials the propose prompt asks for."""
    return int(re.search(r"Propose up to (\d+) new trial", first_user(messages)).group(1))


class Researcher:
    """A scripted model. Propose: reads `best_trials` once, then proposes the next ideas
    (params dicts or full trial dicts) as many as asked. Replan: writes a research-log entry
    naming the best trial. Every request it saw is kept."""

    def __init__(self, ideas: list[dict[str, Any]], *, stop_after: int | None = None, read_first: bool = True) -> None:
        self.ideas = list(ideas)
        self.stop_after = stop_after
        self.read_first = read_first
        self.requests: list[FakeRequest] = []
        self.replans = 0
        self._batch: list[dict[str, Any]] = []

    def __call__(self, req: FakeRequest) -> Reply:
        self.requests.append(req)
        names = {tool.name for tool in req.tools}
        last = req.messages[-1]
        if "propose_trials" in names:
            if self.read_first and last.role is Role.USER and len(names) > 1:
                return ToolCall(name="best_trials", arguments={"k": 3})
            # After a refused propose_trials (the OpenAI wire has no error flag: no acceptance), send them again.
            called = [c.name for c in req.messages[-2].tool_calls] if last.role is Role.TOOL else []
            refused = "propose_trials" in called and not any('"accepted"' in r.content for r in last.tool_results)
            if not refused:
                n = slots(req.messages)
                self._batch, self.ideas = self.ideas[:n], self.ideas[n:]
            trials = [idea if "hypothesis" in idea else _idea(idea) for idea in self._batch]
            return ToolCall(name="propose_trials", arguments={"trials": trials})
        self.replans += 1
        stop = self.stop_after is not None and self.replans >= self.stop_after
        history = first_user(req.messages).split("## Trials so far", 1)[1].split("##", 1)[0].strip()
        return ToolCall(
            name="write_research_log",
            arguments={"learned": f"round {self.replans}: {history.splitlines()[0][:200]}",
                       "next": "move towards the best point", "stop": stop,
                       "reason": "scripted stop" if stop else "keep going"},
        )  # fmt: skip


def _idea(params: dict[str, Any]) -> dict[str, Any]:
    return {"params": params, "hypothesis": f"try {params}", "expected_effect": "objective drops"}


SdkFactory = Callable[[Callable[[FakeRequest], Reply]], tuple[SDKProvider, FakeLLMServer]]


@pytest.fixture(params=["openai", "anthropic"])
def sdk(request: pytest.FixtureRequest) -> Iterator[SdkFactory]:
    """Call with a script: (a real SDK provider of the parametrized kind, its started fake server)."""
    servers: list[FakeLLMServer] = []

    def build(script: Callable[[FakeRequest], Reply]) -> tuple[SDKProvider, FakeLLMServer]:
        server = FakeLLMServer(script, api_key=KEY).start()
        servers.append(server)
        if request.param == "openai":
            url, cls, model = server.openai_base_url, OpenAIProvider, "gpt-4.1-mini"
        else:
            url, cls, model = server.anthropic_base_url, AnthropicProvider, "claude-sonnet-4-5"
        return cls(model, api_key=KEY, base_url=url, api_key_env=KEY_ENV, retry=FAST), server

    yield build
    for server in servers:
        server.stop()


def complete_all(ledger: Ledger, value: Callable[[dict[str, Any]], float]) -> None:
    """Launch and complete every proposed trial with `value(params)` (no compute: ledger only)."""
    for trial in ledger.unlaunched():
        ledger.mark_launched(trial.number, f"job-{trial.number}")
        ledger.complete(trial.number, value(trial.params))


@pytest.fixture
def llm_env(compute_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The compute daemon's home and the key in the environment (run with `policy_factory=FAST_LLM`)."""
    monkeypatch.setenv(KEY_ENV, KEY)
    return compute_home


def llm_policy(server: FakeLLMServer, provider: str) -> dict[str, Any]:
    url = server.openai_base_url if provider == "openai" else server.anthropic_base_url
    model = "gpt-4.1-mini" if provider == "openai" else "claude-sonnet-4-5"
    return {"kind": "auto", "provider": provider, "model": model, "base_url": url, "api_key_env": KEY_ENV,
            "pruner": "none"}  # fmt: skip
