"""`SteeredNodes`: the campaign's nodes with approval gates and an optional window end.

It wraps `CampaignNodes` (same four steps) and adds, before each launch, the approval gates
of the config's `approvals` section (see `autoresearch.steering.approvals`), and, with a window
end (nightly), a hard end: no trial launches after it, and the replan after it winds the
campaign down (`Window.wind_down`) and ends the graph.
"""

from __future__ import annotations

from autoresearch.campaign import CampaignState, campaign_status
from autoresearch.runner.context import RunContext
from autoresearch.runner.graph import RunnerState
from autoresearch.runner.nodes import CampaignNodes
from autoresearch.steering import ApprovalRequest, ApprovalStatus, Gate, SetPriority, apply_priority, await_answer


class SteeredNodes:
    """`CampaignNodes` plus approval gates and the nightly window (the graph's `Nodes`)."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.inner = CampaignNodes(ctx)
        self.book = ctx.book

    def propose(self, state: RunnerState) -> RunnerState:
        self.ctx.check_folder()
        return {} if self.ctx.window.past() else self.inner.propose(state)

    def launch(self, state: RunnerState) -> RunnerState:
        """Ask the gates that are due (the graph waits on `interrupt()`), act on the answers, launch."""
        if self.ctx.window.past():
            return {}
        for request in self._due():
            self._apply(await_answer(self.book, request))
        return self.inner.launch(state)

    def evaluate(self, state: RunnerState) -> RunnerState:
        return self.inner.evaluate(state)

    def replan(self, state: RunnerState) -> RunnerState:
        self.ctx.check_folder()
        update = self.inner.replan(state)
        if not update.get("ended") and self.ctx.window.past():
            self.wind_down()
            return {**update, "ended": CampaignState.paused.value}
        return update

    def wind_down(self) -> None:
        self.ctx.window.wind_down(self.ctx)

    # --- gates ------------------------------------------------------------------------------

    def _due(self) -> list[ApprovalRequest]:
        """Requests to answer before launching: priority raises asked in chat, and the launch
        gates of the trials waiting to launch."""
        ledger = self.ctx.ledger
        due = [r for r in self.book.requests() if r.gate is Gate.priority_raise and not r.applied]
        if ledger.state is not CampaignState.running:
            return due
        gates = ledger.campaign.approvals
        waiting = ledger.unlaunched()
        if waiting and gates.gpu_hours_over is not None:
            used = campaign_status(ledger).budget_used.gpu_hours
            if used >= gates.gpu_hours_over:
                numbers = [t.number for t in waiting]
                summary = (f"launch trials beyond {gates.gpu_hours_over:g} GPU-hours (used {used:.3g}); "
                           f"waiting: trials {', '.join(map(str, numbers))}")  # fmt: skip
                details = {"used": used, "threshold": gates.gpu_hours_over, "trials": numbers}
                request = self.book.ask(Gate.gpu_hours, f"gpu_hours_over:{gates.gpu_hours_over:g}", summary, details)
                if not (request.status is ApprovalStatus.approved or request.applied):
                    due.append(request)
        if gates.code_patches:
            for trial in waiting:
                if trial.patch:
                    lines = len(trial.patch.splitlines())
                    why = (trial.hypothesis or trial.rationale or "no hypothesis given")[:120]
                    summary = f"launch trial {trial.number} with a {lines}-line code patch: {why}"
                    request = self.book.ask(Gate.code_patch, f"patch:trial-{trial.number}", summary,
                                            {"trial": trial.number, "patch": trial.patch})  # fmt: skip
                    if not request.applied:
                        due.append(request)
        return due

    def _apply(self, request: ApprovalRequest) -> None:
        """Act on an answered request once."""
        if request.applied:
            return
        ledger, display = self.ctx.ledger, self.ctx.display
        approved = request.status is ApprovalStatus.approved
        who = f"{request.answered_by}" + (f": {request.reason}" if request.reason else "")
        if request.gate is Gate.priority_raise:
            if approved:
                command = self.ctx.inbox.get(int(request.details["message"])).command
                assert isinstance(command, SetPriority), f"approval #{request.id} names a message that is no priority"
                display.event(f"approval #{request.id}: {apply_priority(self.ctx, command)}")
        elif request.gate is Gate.code_patch and not approved:
            trial = ledger.trial(int(request.details["trial"]))
            if not trial.state.final:
                self.ctx.cancel_trial(trial, f"its code patch was denied by {who}")
                ledger.append_note(f"trial {trial.number}'s patch was denied by {who}", author="runner")
        elif request.gate is Gate.gpu_hours and not approved:
            if ledger.state is CampaignState.running:
                reason = (f"paused: launching beyond {request.details['threshold']} GPU-hours was denied by {who}. "
                          "Raise approvals.gpu_hours_over, /resume to be asked again, or /stop")  # fmt: skip
                ledger.set_state(CampaignState.paused, reason)
                ledger.append_note(reason, author="runner")
        self.book.mark_applied(request.id)
