"""Approval gates: actions that wait for a person's yes before the campaign goes on.

The config's `approvals` section names them (launching beyond N GPU-hours, launching a
trial with a code patch, raising the priority from chat). When one is due, the runner
records an `ApprovalRequest` in the campaign's `approvals.json` (the runner is its only
writer; chat reads it) and the graph node calls LangGraph's `interrupt()`: the graph stops
and the runner waits for an `approve` or `deny` message in the inbox (chat's `/approve` and
`/deny`). It records the answer in the book, then resumes the graph with
`Command(resume=answer)`.

A node that called `interrupt()` runs again from its start on resume, and resume values are
matched to `interrupt()` calls by their order within the node. So the book, not the resume
value, is the truth: `await_answer` asks the book first and calls `interrupt()` only while
the request is still open, as often as it takes (a stale resume value just loops once more).
"""

from __future__ import annotations

import enum
import os
import time
from typing import Any

from langgraph.types import interrupt
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from autoresearch.campaign import CampaignPaths


class Gate(str, enum.Enum):
    """What needs a person's yes."""

    gpu_hours = "gpu_hours"
    """Launching more trials once the campaign used `approvals.gpu_hours_over` GPU-hours."""
    code_patch = "code_patch"
    """Launching trials that apply code patches."""
    priority_raise = "priority_raise"
    """Raising the campaign's compute priority."""


class ApprovalStatus(str, enum.Enum):
    """Where a request is."""

    open = "open"
    approved = "approved"
    denied = "denied"


class ApprovalRequest(BaseModel):
    """One question to a person, and its answer."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    id: int
    """Increasing per campaign; `/approve ID` names it."""
    gate: Gate
    key: str
    """What exactly is asked (`gpu_hours_over:2.0`, `patch:trial-7`, `priority:message-12`):
    asking the same thing again returns the same request."""
    summary: str
    """One line for people: what waits and why."""
    details: dict[str, Any] = Field(default_factory=dict)
    """Gate-specific facts (trials, GPU-hours used, old and new priority)."""
    created_at: float
    status: ApprovalStatus = ApprovalStatus.open
    answered_by: str | None = None
    answered_at: float | None = None
    reason: str = ""
    """Why the person said yes or no (optional)."""
    applied: bool = False
    """The runner acted on the answer (a denied request that was applied is asked anew next time)."""


_REQUESTS = TypeAdapter(list[ApprovalRequest])


class ApprovalBook:
    """The approval requests of one campaign (`CampaignPaths.approvals`)."""

    def __init__(self, paths: CampaignPaths) -> None:
        self.path = paths.approvals

    def requests(self) -> list[ApprovalRequest]:
        """Every request, oldest first."""
        if not self.path.is_file():
            return []
        return _REQUESTS.validate_json(self.path.read_text())

    def open_requests(self) -> list[ApprovalRequest]:
        return [r for r in self.requests() if r.status is ApprovalStatus.open]

    def get(self, request_id: int) -> ApprovalRequest | None:
        return next((r for r in self.requests() if r.id == request_id), None)

    def ask(self, gate: Gate, key: str, summary: str, details: dict[str, Any] | None = None) -> ApprovalRequest:
        """The request for `key`: the latest one unless it was denied and applied (then a new one)."""
        existing = [r for r in self.requests() if r.key == key]
        if existing and not (existing[-1].status is ApprovalStatus.denied and existing[-1].applied):
            return existing[-1]
        requests = self.requests()
        request = ApprovalRequest(
            id=max((r.id for r in requests), default=0) + 1, gate=gate, key=key, summary=summary,
            details=details or {}, created_at=time.time(),
        )  # fmt: skip
        self._write([*requests, request])
        return request

    def answer(self, request_id: int, approved: bool, by: str, reason: str = "") -> ApprovalRequest:
        """Record a person's answer (the first answer counts)."""
        status = ApprovalStatus.approved if approved else ApprovalStatus.denied
        return self._update(
            request_id, open_only=True, status=status, answered_by=by, answered_at=time.time(), reason=reason
        )

    def mark_applied(self, request_id: int) -> None:
        self._update(request_id, open_only=False, applied=True)

    def _update(self, request_id: int, *, open_only: bool, **changes: Any) -> ApprovalRequest:
        requests = self.requests()
        for i, r in enumerate(requests):
            if r.id == request_id:
                if open_only and r.status is not ApprovalStatus.open:
                    return r
                requests[i] = r.model_copy(update=changes)
                self._write(requests)
                return requests[i]
        raise KeyError(f"no approval request {request_id} in {self.path}")

    def _write(self, requests: list[ApprovalRequest]) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_bytes(_REQUESTS.dump_json(requests, indent=2))
        os.replace(tmp, self.path)


def await_answer(book: ApprovalBook, request: ApprovalRequest) -> ApprovalRequest:
    """The answered request; while it is open, stop the graph with `interrupt()` (inside a node).

    Safe to call several times per node run and again after resume (see the module docstring).
    """
    while True:
        current = book.get(request.id) or request
        if current.status is not ApprovalStatus.open:
            return current
        interrupt(current.model_dump(mode="json"))
