"""The campaign runner: the propose -> launch -> evaluate -> replan graph, its composition root
(`RunContext`), resume safety (one runner per campaign, idempotent launches) and the live
display. Steering (commands, inbox, approvals, the nightly window) lives in
`autoresearch.steering`.

Names are imported on first use (PEP 562): `autoresearch.runner.display` (what `autoresearch
status` draws its table with) loads rich, not the graph, langgraph or the policies."""

import typing as _typing

from compute.lazy_exports import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from autoresearch.runner.context import RunContext, RunnerSettings
    from autoresearch.runner.display import Display, LiveDisplay, PlainDisplay, QuietDisplay, make_display
    from autoresearch.runner.errors import RunnerBusy, RunnerError
    from autoresearch.runner.gated import SteeredNodes
    from autoresearch.runner.graph import RECURSION_LIMIT, RunnerState, build_graph
    from autoresearch.runner.lock import CampaignLock, holder_pid
    from autoresearch.runner.nodes import CampaignNodes
    from autoresearch.runner.policies import PolicyFactory, build_policy, default_policy, with_llm
    from autoresearch.runner.run import RunOutcome, Start, run_campaign

_WHERE = {
    "RunContext": "autoresearch.runner.context",
    "RunnerSettings": "autoresearch.runner.context",
    "Display": "autoresearch.runner.display",
    "LiveDisplay": "autoresearch.runner.display",
    "PlainDisplay": "autoresearch.runner.display",
    "QuietDisplay": "autoresearch.runner.display",
    "make_display": "autoresearch.runner.display",
    "RunnerBusy": "autoresearch.runner.errors",
    "RunnerError": "autoresearch.runner.errors",
    "SteeredNodes": "autoresearch.runner.gated",
    "RECURSION_LIMIT": "autoresearch.runner.graph",
    "RunnerState": "autoresearch.runner.graph",
    "build_graph": "autoresearch.runner.graph",
    "CampaignLock": "autoresearch.runner.lock",
    "holder_pid": "autoresearch.runner.lock",
    "CampaignNodes": "autoresearch.runner.nodes",
    "PolicyFactory": "autoresearch.runner.policies",
    "build_policy": "autoresearch.runner.policies",
    "default_policy": "autoresearch.runner.policies",
    "with_llm": "autoresearch.runner.policies",
    "RunOutcome": "autoresearch.runner.run",
    "Start": "autoresearch.runner.run",
    "run_campaign": "autoresearch.runner.run",
}
"""Public name -> the module that defines it."""

__getattr__ = _lazy_exports(__name__, _WHERE)


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
