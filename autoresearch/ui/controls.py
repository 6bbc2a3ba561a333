"""The dashboard's actions: one typed request each, applied by the same call the CLI and chat make
(`compute.Client` for jobs and nodes, `ChatSession`'s validated steering posts for campaigns).

Every `apply` returns one sentence saying what happened; a request that cannot be done raises
`ActionError` with what to do instead."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from compute import Client, ComputeError, JobNotFound, priority_name

UNCORDON_TIMEOUT_S = 60.0
CAMPAIGN_ACTIONS = ("pause", "resume", "stop", "budget")
"""`POST /api/campaigns/NAME/ACTION`: chat's /pause, /resume, /stop and /budget."""


class ActionError(ValueError):
    """An action that cannot be done; `status` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class _Action(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class CancelJob(_Action):
    """`autoresearch jobs cancel JOB_ID`."""

    reason: str = ""


class SetJobPriority(_Action):
    """`autoresearch jobs priority JOB_ID PRIORITY`."""

    priority: int | str
    """0-100 or idle, low, normal, high, urgent."""


class Cordon(_Action):
    """`autoresearch compute cordon NODE`."""

    reason: str = ""


class Uncordon(_Action):
    """`autoresearch compute uncordon NODE` (waits for the node's probe)."""


class Steer(_Action):
    """Pause, resume or stop a campaign (chat's /pause, /resume, /stop)."""

    reason: str = ""


class ChangeBudget(_Action):
    """Chat's /budget: budget field -> new value (a string is read as chat reads it: `80` -> 80)."""

    changes: Annotated[dict[str, Any], Field(min_length=1)]


def job_action(client: Client, job_id: str, action: CancelJob | SetJobPriority) -> str:
    try:
        if isinstance(action, CancelJob):
            job = client.cancel(job_id, action.reason or "cancelled from the dashboard")
            return f"job {job_id}: cancel requested ({job.state.value})"
        job = client.set_priority(job_id, action.priority)
        return f"job {job_id}: priority {job.priority} ({priority_name(job.priority)})"
    except JobNotFound as exc:
        raise ActionError(str(exc), 404) from None
    except ComputeError as exc:
        raise ActionError(str(exc)) from None


def node_action(client: Client, node: str, action: Cordon | Uncordon) -> str:
    try:
        if isinstance(action, Cordon):
            client.cordon(node, action.reason or "cordoned from the dashboard")
            return f"node {node} cordoned: it takes no new work; running jobs finish"
        back = client.uncordon(node, timeout=UNCORDON_TIMEOUT_S)
        return f"node {node} is {back.state.value} again (it passed its probe)"
    except ComputeError as exc:
        raise ActionError(str(exc)) from None


def campaign_action(name: str, home: Path | None, kind: str, action: Steer | ChangeBudget) -> str:
    """Post the command to the campaign's inbox, validated as chat validates it."""
    from autoresearch.chat import ChatError, ChatSession
    from autoresearch.chat.slash import parse_value
    from autoresearch.steering import InboxError

    try:
        session = ChatSession(name, home=home, author="ui")
        if isinstance(action, ChangeBudget):
            changes = {k: parse_value(v) if isinstance(v, str) else v for k, v in action.changes.items()}
            return session.set_budget(changes)
        if kind == "pause":
            return session.pause(action.reason)
        if kind == "stop":
            return session.stop(action.reason)
        if kind == "resume":
            return session.resume()
        raise ActionError(f"no campaign action {kind!r}; known: {', '.join(CAMPAIGN_ACTIONS)}", 404)
    except (ChatError, InboxError) as exc:
        raise ActionError(str(exc)) from None
