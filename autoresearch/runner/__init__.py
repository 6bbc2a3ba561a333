"""The campaign runner: the propose -> launch -> evaluate -> replan graph, its composition root
(`RunContext`), resume safety (one runner per campaign, idempotent launches) and the live
display. Steering (commands, inbox, approvals, the nightly window) lives in
`autoresearch.steering`."""

from autoresearch.runner.context import RunContext, RunnerSettings
from autoresearch.runner.display import Display, LiveDisplay, PlainDisplay, QuietDisplay, make_display
from autoresearch.runner.errors import RunnerBusy, RunnerError
from autoresearch.runner.gated import SteeredNodes
from autoresearch.runner.graph import RECURSION_LIMIT, RunnerState, build_graph
from autoresearch.runner.lock import CampaignLock, holder_pid
from autoresearch.runner.nodes import CampaignNodes
from autoresearch.runner.policies import PolicyFactory, build_policy, default_policy, with_llm
from autoresearch.runner.run import RunOutcome, Start, run_campaign

__all__ = [
    "RECURSION_LIMIT",
    "CampaignLock",
    "CampaignNodes",
    "Display",
    "LiveDisplay",
    "PlainDisplay",
    "PolicyFactory",
    "QuietDisplay",
    "RunContext",
    "RunOutcome",
    "RunnerBusy",
    "RunnerError",
    "RunnerSettings",
    "RunnerState",
    "Start",
    "SteeredNodes",
    "build_graph",
    "build_policy",
    "default_policy",
    "holder_pid",
    "make_display",
    "run_campaign",
    "with_llm",
]
