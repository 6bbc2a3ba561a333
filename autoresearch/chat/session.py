"""`ChatSession`: one person attached to one campaign, from any terminal.

Questions are answered from the campaign's ledger and compute (status, best, trials, a
trial's story, a job's log). Steering is validated here against the campaign as the runner
last stored it, then posted to the campaign's inbox, so the runner applies it at its next
replan (or when it runs again). Every acknowledgement says exactly what changes
(`before -> after`); `outcomes()` reports what the runner did with each posted message.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from autoresearch.campaign import (
    Campaign, CampaignPaths, Ledger, LedgerError, TrialRecord, TrialState, campaign_status, hours_unit,
)
from autoresearch.campaign.params import check_params
from autoresearch.runner import holder_pid
from autoresearch.steering import (
    ApprovalBook,
    ApprovalRequest,
    Approve,
    CancelTrial,
    Command,
    Deny,
    Note,
    Pause,
    Resume,
    SetBudget,
    SetPriority,
    SetSpace,
    SteeringError,
    SteeringMessage,
    Stop,
    TryTrial,
    change_budget,
    change_priority,
    change_space,
    describe_spec,
    post,
    read_messages,
)
from compute import Client, ComputeError
from compute.attempt_logs import read_tail

Home = str | os.PathLike[str] | None


class ChatError(ValueError):
    """A question or change that cannot be answered or made; the message says what to do."""


class ChatSession:
    """Questions and steering for campaign `name`."""

    def __init__(self, name: str, *, home: Home = None, author: str = "chat") -> None:
        self.name = name
        self.home = home
        self.author = author
        try:
            self.paths = CampaignPaths.of(name, home)
            Ledger.load(name, home)
        except LedgerError as exc:
            raise ChatError(str(exc)) from None
        self.posted: dict[int, str] = {}
        """Message id -> what it asked, for messages this session posted."""
        self._reported: set[int] = set()
        self._lock = threading.Lock()

    # --- reading ----------------------------------------------------------------------------

    def ledger(self) -> Ledger:
        return Ledger.load(self.name, self.home)

    def campaign(self) -> Campaign:
        return self.ledger().campaign

    def runner_pid(self) -> int | None:
        return holder_pid(self.paths.lock)

    def waiting(self) -> list[ApprovalRequest]:
        """Approval requests the campaign waits on."""
        return ApprovalBook(self.paths).open_requests()

    def status(self) -> str:
        ledger = self.ledger()
        current = campaign_status(ledger)
        campaign = ledger.campaign
        used = current.budget_used
        counts: dict[str, int] = {}
        for t in current.trials:
            counts[t.state.value] = counts.get(t.state.value, 0) + 1
        pid = self.runner_pid()
        lines = [
            f"campaign {self.name}: {current.state.value}"
            + (f" ({ledger.state_reason})" if ledger.state_reason else ""),
            f"runner: pid {pid}" if pid else "runner: none attached (changes apply when it runs again)",
            f"trials: {used.trials}/{campaign.budget.max_trials} counted; "
            + (", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none yet"),
            f"budget: max_parallel {campaign.budget.max_parallel}, {hours_unit(used.real_gpus)} {used.gpu_hours:.3g}"
            + (f"/{campaign.budget.max_gpu_hours:g}" if campaign.budget.max_gpu_hours else "")
            + f", llm ${used.llm_usd:.2f}, priority {campaign.compute.priority}",
            "search space: " + "; ".join(f"{k} {describe_spec(v)}" for k, v in campaign.search_space.items()),
            self.best(),
        ]
        pending = read_messages(self.name, pending_only=True, home=self.home)
        if pending:
            lines.append("pending for the runner: " + ", ".join(f"#{m.id} {m.kind}" for m in pending))
        for r in self.waiting():
            lines.append(f"WAITING for approval #{r.id}: {r.summary} (/approve {r.id} or /deny {r.id})")
        return "\n".join(lines)

    def best(self) -> str:
        ledger = self.ledger()
        best = ledger.best()
        if best is None:
            return "best: no complete trial yet"
        metric = ledger.campaign.objective.metric
        return f"best: trial {best.number} {metric} {best.value:.6g} ({_params(best.params)})"

    def trials(self, limit: int = 20) -> str:
        trials = self.ledger().trials()[-limit:]
        if not trials:
            return "no trials yet"
        return "\n".join(_trial_line(t) for t in trials)

    def trial(self, number: int) -> str:
        """A trial's story: parameters, why it was proposed, its result or why it failed."""
        t = self._trial(number)
        lines = [_trial_line(t)]
        if t.rationale:
            lines.append(f"why proposed: {t.rationale}")
        if t.hypothesis:
            lines.append(f"hypothesis: {t.hypothesis}")
        if t.state is TrialState.failed:
            lines.append(f"failed ({t.failure_class.value if t.failure_class else 'unknown class'}); log excerpt:")
            lines.append((t.log_excerpt or "(no log excerpt)").strip()[-1500:])
        elif t.state is TrialState.cancelled:
            lines.append(f"cancelled: {t.log_excerpt or 'no reason recorded'}")
        if t.job_id:
            lines.append(f"job {t.job_id} (/logs {t.number} shows its log)")
        return "\n".join(lines)

    def logs(self, number: int, lines: int = 40) -> str:
        """The last `lines` lines of trial `number`'s job log."""
        t = self._trial(number)
        if not t.job_id:
            raise ChatError(f"trial {number} is {t.state.value} and has no job yet, so no log")
        client = Client(self.home, autostart=False)
        try:
            path = client.log_path(t.job_id)
        except ComputeError as exc:
            raise ChatError(f"trial {number}: {exc}") from None
        finally:
            client.close()
        if not Path(path).is_file():
            raise ChatError(f"trial {number}: cannot read its log {path}: it is not there")
        tail = read_tail(path, lines=lines).text
        return f"trial {number}, job {t.job_id}, {path}:\n{tail.rstrip() or '(empty log)'}"

    def _trial(self, number: int) -> TrialRecord:
        try:
            return self.ledger().trial(number)
        except LedgerError:
            count = len(self.ledger().trials())
            raise ChatError(
                f"campaign {self.name} has no trial {number} (trials 0-{count - 1}; /trials lists them)"
            ) from None

    # --- steering -----------------------------------------------------------------------------

    def pause(self, reason: str = "") -> str:
        return self._post(Pause(reason=reason), "pause: no new trials")

    def resume(self) -> str:
        return self._post(Resume(), "resume")

    def stop(self, reason: str = "") -> str:
        return self._post(Stop(reason=reason), "stop: running trials are cancelled, the campaign ends")

    def note(self, text: str) -> str:
        if not text.strip():
            raise ChatError("a note needs text: /note TEXT")
        return self._post(Note(text=text), f"note for the policy: {text.strip()}")

    def set_budget(self, changes: dict[str, Any]) -> str:
        _, lines = self._check(change_budget, changes)
        return self._post(SetBudget(changes=changes), "; ".join(lines) or "no change")

    def set_space(self, params: dict[str, Any]) -> str:
        _, lines = self._check(change_space, params)
        return self._post(SetSpace(params=params), "; ".join(lines) or "no change")

    def set_priority(self, priority: int | str) -> str:
        campaign, lines = self._check(change_priority, priority)
        text = "; ".join(lines) or "no change"
        if lines and campaign.approvals.priority_raise and campaign.compute.priority > self.campaign().compute.priority:
            text += " (needs approval: approvals.priority_raise)"
        return self._post(SetPriority(priority=priority), text)

    def try_trial(self, params: dict[str, Any], rationale: str = "") -> str:
        """Queue a trial with these parameters; missing ones come from the best trial so far."""
        ledger = self.ledger()
        space = ledger.campaign.search_space
        filled = dict(params)
        best = ledger.best()
        borrowed: list[str] = []
        if best is not None:
            borrowed = [k for k in space if k not in params and k in best.params]
            filled.update({k: best.params[k] for k in borrowed})
        try:
            checked = check_params(space, filled)
        except ValueError as exc:
            hint = "" if best is not None else " (missing ones are taken from the best trial once there is one)"
            raise ChatError(f"{exc}{hint}") from None
        text = f"try {_params(checked)}"
        if borrowed and best is not None:
            text += f" ({', '.join(borrowed)} from best trial {best.number})"
        return self._post(TryTrial(params=checked, rationale=rationale), text)

    def cancel(self, number: int) -> str:
        t = self._trial(number)
        if t.state.final:
            raise ChatError(
                f"trial {number} is already {t.state.value}; only proposed or running trials can be cancelled"
            )
        return self._post(CancelTrial(trial=number), f"cancel trial {number} ({t.state.value})")

    def answer(self, approved: bool, request: int | None = None, reason: str = "") -> str:
        waiting = self.waiting()
        if not waiting:
            raise ChatError("nothing is waiting for approval (/status shows what the campaign is doing)")
        chosen = waiting[0] if request is None else next((r for r in waiting if r.id == request), None)
        if chosen is None:
            ids = ", ".join(str(r.id) for r in waiting)
            raise ChatError(f"request {request} is not waiting; waiting: {ids}")
        command = (Approve if approved else Deny)(request=chosen.id, reason=reason)
        return self._post(command, f"{command.kind} #{chosen.id}: {chosen.summary}")

    def send(self, command: Command) -> str:
        """Check `command` against the campaign and queue it, as the matching slash command does."""
        match command:
            case Pause() | Stop():
                return (self.pause if isinstance(command, Pause) else self.stop)(command.reason)
            case Resume():
                return self.resume()
            case Note():
                return self.note(command.text)
            case SetBudget():
                return self.set_budget(command.changes)
            case SetSpace():
                return self.set_space(command.params)
            case SetPriority():
                return self.set_priority(command.priority)
            case TryTrial():
                return self.try_trial(command.params, command.rationale)
            case CancelTrial():
                return self.cancel(command.trial)
            case Approve() | Deny():
                return self.answer(isinstance(command, Approve), command.request, command.reason)
        raise ChatError(f"{command.kind} messages are not sent from chat")

    def _check(self, change: Any, value: Any) -> tuple[Campaign, list[str]]:
        try:
            return change(self.campaign(), value)
        except SteeringError as exc:
            raise ChatError(str(exc)) from None

    def _post(self, command: Command, what: str) -> str:
        message = post(self.name, command, author=self.author, home=self.home)
        self.posted[message.id] = what
        when = "the runner applies it at its next replan"
        if not self.runner_pid():
            when = f"no runner is attached: it applies when the campaign runs again (`autoresearch resume {self.name}`)"
        return f"queued #{message.id} {what} ({when})"

    def outcomes(self) -> list[SteeringMessage]:
        """Messages this session posted that the runner handled since the last call (thread-safe)."""
        with self._lock:
            done = []
            for message in read_messages(self.name, home=self.home):
                if message.id in self.posted and message.handled_at is not None and message.id not in self._reported:
                    self._reported.add(message.id)
                    done.append(message)
            return done

    def unapplied(self) -> list[int]:
        return [i for i in self.posted if i not in self._reported]


def _params(params: dict[str, Any]) -> str:
    return " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in params.items())


def _trial_line(t: TrialRecord) -> str:
    value = f" value {t.value:.6g}" if t.value is not None else ""
    failure = f" ({t.failure_class.value})" if t.failure_class else ""
    return f"trial {t.number}: {t.state.value}{failure}{value} {_params(t.params)}"
