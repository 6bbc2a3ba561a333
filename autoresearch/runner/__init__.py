"""The campaign runner: the propose -> launch -> evaluate -> replan graph, its steering inbox,
resume safety (one runner per campaign, idempotent launches) and the live display."""

from autoresearch.runner.display import Display, LiveDisplay, PlainDisplay, QuietDisplay, make_display
from autoresearch.runner.graph import RECURSION_LIMIT, RunnerState, build_graph
from autoresearch.runner.inbox import (
    Inbox,
    InboxError,
    SteeringKind,
    SteeringMessage,
    open_inbox,
    post,
    read_messages,
)
from autoresearch.runner.launch import trial_key
from autoresearch.runner.lock import CampaignLock, RunnerBusy, holder_pid
from autoresearch.runner.nodes import CampaignNodes, RunnerSettings
from autoresearch.runner.policies import POLICY_BUILDERS, PolicyBuilder, build_policy, register_policy
from autoresearch.runner.run import RunnerError, RunOutcome, Start, run_campaign
from autoresearch.runner.steering import DEFAULT_HANDLERS, Handler, SteeringContext, drain

__all__ = [
    "DEFAULT_HANDLERS",
    "POLICY_BUILDERS",
    "RECURSION_LIMIT",
    "CampaignLock",
    "CampaignNodes",
    "Display",
    "Handler",
    "Inbox",
    "InboxError",
    "LiveDisplay",
    "PlainDisplay",
    "PolicyBuilder",
    "QuietDisplay",
    "RunOutcome",
    "RunnerBusy",
    "RunnerError",
    "RunnerSettings",
    "RunnerState",
    "Start",
    "SteeringContext",
    "SteeringKind",
    "SteeringMessage",
    "build_graph",
    "build_policy",
    "drain",
    "holder_pid",
    "make_display",
    "open_inbox",
    "post",
    "read_messages",
    "register_policy",
    "run_campaign",
    "trial_key",
]
