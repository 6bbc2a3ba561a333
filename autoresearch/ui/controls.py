"""The dashboard's actions: one typed request each, applied by the same call the CLI and chat make
(`compute.Client` for jobs and nodes, `ChatSession`'s validated steering posts for campaigns,
one per steering command, generated from the command models).

Every `apply` returns one sentence saying what happened; a request that cannot be done raises
`ActionError` with what to do instead."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from pydantic import BaseModel, ConfigDict, Field

from compute import Client, ComputeError, JobNotFound, priority_name

if TYPE_CHECKING:
    from autoresearch.steering import Command

UNCORDON_TIMEOUT_S = 60.0


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


class ChatLine(_Action):
    """`POST /api/campaigns/NAME/chat`: one chat slash command (`/space lr=1e-4..1e-2`, `/note ...`,
    `/status`), read by chat's grammar, which is generated from the steering commands."""

    line: Annotated[str, Field(min_length=1)]


def campaign_actions() -> dict[str, type[BaseModel]]:
    """`POST /api/campaigns/NAME/KIND`, the body the command's fields as JSON: every steering command
    people send (`pause {"reason": ...}`, `budget {"changes": {...}}`, `space`, `try`, `note` ...).
    Imported on the first campaign action: the steering package is slow to import."""
    from autoresearch.steering import SENT_BY_PEOPLE

    return {command.model_fields["kind"].default: command for command in SENT_BY_PEOPLE}


def campaign_action(name: str, home: Path | None, command: Command) -> str:
    """Post the command to the campaign's inbox, validated as chat validates it (the text values
    of its dict fields read as chat reads them: a form's `80` is 80)."""
    from autoresearch.chat import ChatError, ChatSession, read_text_values
    from autoresearch.steering import InboxError

    try:
        session = ChatSession(name, home=home, author="ui")
        return session.send(read_text_values(command))
    except (ChatError, InboxError) as exc:
        raise ActionError(str(exc)) from None


def chat_line(name: str, home: Path | None, action: ChatLine) -> str:
    """Run one slash command as `autoresearch chat NAME` would (author `ui`); its answer, or
    `ActionError` with chat's error."""
    from autoresearch.chat import ChatError, ChatSession, Conversation

    line = action.line.strip()
    if not line.startswith("/"):
        raise ActionError(f"{line!r} is not a slash command: write one as in chat, e.g. /note try a smaller lr "
                          "(/help lists them)")  # fmt: skip
    try:
        answer = "\n".join(Conversation(ChatSession(name, home=home, author="ui")).handle(line))
    except ChatError as exc:
        raise ActionError(str(exc)) from None
    if answer.startswith("error: "):
        raise ActionError(answer.removeprefix("error: "))
    return answer or "nothing to do"
