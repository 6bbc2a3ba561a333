"""The runner's approval loop: while the graph waits on `interrupt()` (see `approvals`), read the
inbox until `/approve` or `/deny` answers an open request, `/stop` denies them all, or the
nightly window ends."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from autoresearch.steering.approvals import ApprovalRequest, ApprovalStatus
from autoresearch.steering.commands import Approve, Deny, Stop, WindowEnd
from autoresearch.steering.inbox import Inbox, SteeringMessage
from autoresearch.steering.target import SteeringTarget


def wait_for_answer(
    target: SteeringTarget, inbox: Inbox, on_give_up: Callable[[], None], poll_s: float = 0.3
) -> dict[str, Any] | None:
    """Block until an open request is answered; returns the graph's resume value
    (`{"request": ID, "approved": bool, "by": AUTHOR}`), or None when the window ended first
    (`on_give_up` ran; the question is asked again next time)."""
    book = target.book
    shown: set[int] = set()
    while True:
        open_requests = {r.id: r for r in book.open_requests()}
        for r in open_requests.values():
            if r.id not in shown:
                shown.add(r.id)
                chat = f"autoresearch chat {target.ledger.campaign.name}"
                target.event(f"waiting for approval #{r.id}: {r.summary} (`/approve {r.id}` or `/deny {r.id}` in `{chat}`)")
        if not open_requests:
            return {"request": None, "approved": False}
        for message in inbox.messages(pending_only=True):
            command = message.command
            if isinstance(command, Stop):
                for r in open_requests.values():
                    book.answer(r.id, False, message.author, "the campaign was stopped")
                return {"request": None, "approved": False}
            if isinstance(command, Approve | Deny):
                answer = _answer(target, inbox, message, command, open_requests)
                if answer is not None:
                    return answer
            if isinstance(command, WindowEnd):
                inbox.mark_handled(message.id, target.window.apply(command))
        if target.window.past():
            on_give_up()
            return None
        time.sleep(poll_s)


def _answer(
    target: SteeringTarget, inbox: Inbox, message: SteeringMessage, command: Approve | Deny,
    open_requests: dict[int, ApprovalRequest],
) -> dict[str, Any] | None:  # fmt: skip
    wanted = command.request
    request = open_requests.get(wanted) if wanted is not None else next(iter(open_requests.values()))
    if request is None:
        inbox.mark_handled(message.id, f"ignored: request {wanted} is not waiting")
        return None
    approved = isinstance(command, Approve)
    answered = target.book.answer(request.id, approved, message.author, command.reason)
    verdict = "approved" if answered.status is ApprovalStatus.approved else "denied"
    inbox.mark_handled(message.id, f"request #{request.id} {verdict}: {request.summary}")
    target.event(f"approval #{request.id} {verdict} by {message.author}")
    return {"request": request.id, "approved": approved, "by": message.author}
