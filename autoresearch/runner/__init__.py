"""The campaign runner: the propose -> launch -> evaluate -> replan graph, its steering inbox,
resume safety (one runner per campaign, idempotent launches) and the live display."""

from autoresearch.runner.actions import NIGHTLY_PAUSE, ActionKind, SteeringActions
from autoresearch.runner.approvals import ApprovalBook, ApprovalRequest, ApprovalStatus, Gate, await_answer
from autoresearch.runner.display import Display, LiveDisplay, PlainDisplay, QuietDisplay, make_display
from autoresearch.runner.gated import SteeredNodes
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
from autoresearch.runner.lock import CampaignLock, RunnerBusy, holder_pid
from autoresearch.runner.nodes import CampaignNodes, RunnerSettings
from autoresearch.runner.overrides import Overrides, SteeringError, effective_campaign, load_overrides
from autoresearch.runner.policies import POLICY_BUILDERS, PolicyBuilder, build_policy, register_policy
from autoresearch.runner.run import RunnerError, RunOutcome, Start, run_campaign
from autoresearch.runner.steering import DEFAULT_HANDLERS, Handler, SteeringContext, drain

__all__ = [
    "DEFAULT_HANDLERS",
    "NIGHTLY_PAUSE",
    "POLICY_BUILDERS",
    "RECURSION_LIMIT",
    "ActionKind",
    "ApprovalBook",
    "ApprovalRequest",
    "ApprovalStatus",
    "CampaignLock",
    "CampaignNodes",
    "Display",
    "Gate",
    "Handler",
    "Inbox",
    "InboxError",
    "LiveDisplay",
    "Overrides",
    "PlainDisplay",
    "PolicyBuilder",
    "QuietDisplay",
    "RunOutcome",
    "RunnerBusy",
    "RunnerError",
    "RunnerSettings",
    "RunnerState",
    "Start",
    "SteeredNodes",
    "SteeringActions",
    "SteeringContext",
    "SteeringError",
    "SteeringKind",
    "SteeringMessage",
    "await_answer",
    "build_graph",
    "build_policy",
    "drain",
    "effective_campaign",
    "holder_pid",
    "load_overrides",
    "make_display",
    "open_inbox",
    "post",
    "read_messages",
    "register_policy",
    "run_campaign",
]
