"""`LLMPolicy`: a model proposes the trials and keeps the research log, through tool calls.

propose: the model sees the campaign, a compact history, its research log, steering
messages and (code-edit) the parent's editable files, may call the read skills, and finishes
with `propose_trials`. replan: when trials ended since the last replan, the model finishes
with `write_research_log` (learned, next, stop?); the entry becomes the decision's notes,
which the runner appends to the research log and the next propose shows.

Failures:
- LLMUnavailable (retries ran out) propagates: the runner pauses the campaign.
- BudgetExceeded (budget.max_llm_usd spent): no more model calls. The campaign *stops*: the
  step in progress gives what it has (propose: the re-runs only), the research log says why,
  and the next replan returns stop. The runner's own budget check (ledger.llm_usd, which this
  policy keeps up to date) agrees.
- A model that gives no valid finish call within its bounds: `policy.fallback` decides. `optuna`
  (the default): that round's trials are Optuna samples, their rationale starting with
  `Optuna fallback`, and the research log says so; the model is asked again next round (without a
  search space there is nothing to sample: no trial that round, and the third such round in a row
  pauses). `pause`: PolicyPause (the runner pauses the campaign with the reason). `fail`:
  PolicyError (the runner marks the campaign failed with that message).
- More trials than free slots in `propose_trials`: the first ones are kept, and the research log
  tells the model which were dropped.

Usage is metered per node ("propose", "replan") and saved in the ledger's facts (`llm_usage`,
`llm_usd`) after every step, so the budget spans restarts; it is also logged to an MLflow run named `llm-policy` in the
campaign's experiment (per call, per node and totals, plus the provider and model).
"""

from __future__ import annotations

import logging
from pathlib import Path

import prompts
from autoresearch.campaign import Campaign, FallbackKind, Proposal, TrialLedger, TrialRecord, declared_ranking
from autoresearch.llm import (
    BudgetExceeded,
    LLMError,
    LLMSettings,
    LoopOutcome,
    Message,
    Provider,
    RetryPolicy,
    UsageMeter,
    UsageReport,
    log_llm_settings,
    log_usage,
    make_provider,
    run_tool_loop,
)
from autoresearch.policy.agent_skills import READ_TOOLS, AgentContext, agent_registry
from autoresearch.policy.base import (
    PolicyContext,
    PolicyError,
    PolicyPause,
    PruneDecision,
    ReplanAction,
    ReplanDecision,
)
from autoresearch.policy.history import (
    code_text,
    describe_budget,
    describe_objective,
    describe_space,
    fmt,
    history_text,
    notes_text,
    steering_text,
)
from autoresearch.policy.lineage import Lineage, lineage
from autoresearch.policy.optuna_policy import OptunaPolicy
from autoresearch.policy.pruning import OptunaPruning
from autoresearch.workspace import Workspaces
from skills import SkillContext
from tracking import llm_usage_run

log = logging.getLogger("autoresearch.policy")

MAX_FAILED_ROUNDS = 3
"""Rounds in a row without a valid model proposal, and nothing to fall back on (no search
space), before the campaign pauses."""
FALLBACK_RATIONALE = "Optuna fallback"
"""How the rationale of a trial sampled by Optuna for a failed model round starts."""
FIXED_CHARS = 20_000
"""Characters of the fixed files shown in the system prompt."""


class LLMPolicy:
    """Proposes trials and writes the research log with a model that calls tools."""

    def __init__(
        self,
        ledger: TrialLedger,
        provider: Provider,
        *,
        skill_context: SkillContext | None = None,
        max_invalid: int = 3,
    ) -> None:
        self.ledger = ledger
        self.campaign = ledger.campaign
        self.settings = self.campaign.policy
        saved = ledger.facts().llm_usage
        self.meter = UsageMeter(
            max_usd=self.campaign.budget.max_llm_usd, start=UsageReport.model_validate(saved) if saved else None
        )
        """Token use and cost of this campaign's model calls, per node; carried across resumes."""
        self.provider = self.meter.wrap(provider)
        self.registry = agent_registry()
        self.workspaces = Workspaces(ledger) if self.campaign.code else None
        self.max_invalid = max_invalid
        self._base = skill_context or SkillContext.create(
            home=ledger.folder.parents[1], tracking_uri=self.campaign.tracking.uri
        )
        self.pruning = OptunaPruning(ledger, self.settings.pruner)
        self._pending: list[str] = []
        self._budget_note: str | None = None
        self._failed_rounds = 0
        self._seen_final: set[int] | None = None

    def __repr__(self) -> str:
        return f"LLMPolicy(campaign={self.campaign.name!r}, provider={self.provider.inner!r})"

    # --- the Policy protocol ------------------------------------------------------------

    def propose(self, ctx: PolicyContext, n: int) -> list[Proposal]:
        if n <= 0:
            return []
        lin = lineage(self.campaign, ctx.trials) if self.campaign.code else None
        if self._budget_note is not None:
            return []
        parent = lin.parent if lin else None
        agent = self._context(slots=n, parent=parent)
        user = prompts.render(
            "propose",
            status=self._status(ctx, lin),
            history=history_text(ctx.trials, self.campaign),
            research_log=notes_text(ctx.notes),
            steering=steering_text(ctx.steering),
            code_files=code_text(self.workspaces.files(parent), parent) if self.workspaces else "",
            n=n,
        )
        outcome = self._step("propose", user, agent, finish="propose_trials")
        if outcome is None:
            return []
        if outcome.finished and agent.proposals:
            self._failed_rounds = 0
            if agent.cut_note:
                self._pending.append(f"propose: {agent.cut_note}.")
            return agent.proposals
        return self._no_proposal(ctx, n, parent, outcome.reason)

    def replan(self, ctx: PolicyContext) -> ReplanDecision:
        if self._budget_note is not None:
            return self._decision(ReplanAction.stop, self._budget_note)
        final = {t.number for t in ctx.trials if t.state.final}
        if not final or final == self._seen_final:
            return self._decision(ReplanAction.continue_, "no trial ended since the last replan")
        self._seen_final = final
        agent = self._context()
        user = prompts.render(
            "replan",
            status=self._status(ctx, lineage(self.campaign, ctx.trials) if self.campaign.code else None),
            history=history_text(ctx.trials, self.campaign),
            research_log=notes_text(ctx.notes),
            steering=steering_text(ctx.steering),
        )
        outcome = self._step("replan", user, agent, finish="write_research_log")
        if outcome is None:
            return self._decision(ReplanAction.stop, self._budget_note or "")
        entry = agent.log_entry
        if not outcome.finished or entry is None:
            self._pending.append(f"replan: the model wrote no research-log entry ({outcome.reason}).")
            return self._decision(ReplanAction.continue_, "no research-log entry this round")
        text = f"Learned: {entry.learned}\nNext: {entry.next}"
        if entry.stop:
            text += f"\nStop: {entry.reason}"
        self._pending.append(text)
        action = ReplanAction.stop if entry.stop else ReplanAction.continue_
        return self._decision(action, entry.reason or "the model continues")

    def judge(self, trial: TrialRecord) -> PruneDecision:
        """The campaign's Optuna pruner on a running trial's intermediate values."""
        return self.pruning.judge(trial)

    # --- steps ------------------------------------------------------------------------

    def _step(self, node: str, user: str, agent: AgentContext, *, finish: str) -> LoopOutcome | None:
        """One tool loop; None when the LLM budget ran out (the policy stops using the model)."""
        messages = [Message.system(self._system()), Message.user(user)]
        try:
            outcome = run_tool_loop(
                self.provider.with_node(node),
                messages,
                self.registry,
                agent,
                tools=READ_TOOLS,
                finish=finish,
                max_tool_calls=self.settings.max_tool_calls,
                max_invalid=self.max_invalid,
            )
        except BudgetExceeded as exc:
            self._budget_note = (
                f"LLM budget spent (${exc.spent_usd:.4f} of max_llm_usd ${exc.budget_usd:.4f}): the policy makes "
                "no more model calls and the campaign stops. Raise budget.max_llm_usd and resume to go on."
            )
            self._pending.append(self._budget_note)
            return None
        finally:
            self._save_usage()
            self._log_usage()
        log.info("%s: %d turns, %d tool calls, %d invalid", node, outcome.turns, outcome.tool_calls, outcome.invalid)
        return outcome

    def _save_usage(self) -> None:
        report = self.meter.report()
        spent = {"llm_usd": report.total.cost_usd} if report.total.cost_usd > self.ledger.llm_usd else {}
        self.ledger.update_facts(llm_usage=report.model_dump(mode="json"), **spent)

    def _log_usage(self) -> None:
        """Log the calls not logged yet to the campaign's `llm-policy` MLflow run (made on first use).
        Tracking trouble is logged and skipped: it must not stop the research."""
        try:
            tracker = self._base.tracker
            run_id = self.ledger.facts().llm_run_id
            if run_id is None:
                run_id = llm_usage_run(tracker, self.campaign.experiment, self.campaign.name)
                self.ledger.update_facts(llm_run_id=run_id)
                settings = self.settings
                if settings.provider is not None:
                    log_llm_settings(tracker, run_id, LLMSettings(
                        provider=settings.provider.value, model=settings.model or self.provider.model,
                        base_url=settings.base_url, api_key_env=settings.api_key_env,
                    ))  # fmt: skip
            log_usage(tracker, run_id, self.meter)
        except Exception as exc:  # noqa: BLE001 - usage logging is best effort
            log.warning("could not log LLM usage to MLflow: %s", exc)

    def _decision(self, action: ReplanAction, reason: str) -> ReplanDecision:
        notes, self._pending = "\n\n".join(self._pending), []
        return ReplanDecision(action=action, notes=notes, reason=reason)

    def _no_proposal(self, ctx: PolicyContext, n: int, parent: int | None, reason: str) -> list[Proposal]:
        """A round the model gave no valid proposal in: what `policy.fallback` says to do."""
        self._failed_rounds += 1
        what = f"the model gave no valid proposal ({reason})"
        advice = "check policy.model (a model that calls tools well) and the prompts"
        if self.settings.fallback is FallbackKind.fail:
            raise PolicyError(f"{what}; policy.fallback is fail. {advice.capitalize()}, then resume.")
        if self.settings.fallback is FallbackKind.pause or (
            not self.campaign.search_space and self._failed_rounds >= MAX_FAILED_ROUNDS
        ):
            why = "policy.fallback is pause" if self.settings.fallback is FallbackKind.pause else (
                f"{self._failed_rounds} rounds in a row, and no search space for Optuna to sample"
            )
            raise PolicyPause(f"{what}; {why}. {advice.capitalize()}, then `autoresearch resume {self.campaign.name}`.")
        fallback = self._fallback(ctx, n, parent, reason)
        instead = (
            f"{len(fallback)} Optuna sample(s) instead (policy.fallback: optuna), trial rationale "
            f"'{FALLBACK_RATIONALE}'" if fallback else "no trial this round (no search space to sample)"
        )
        self._pending.append(f"propose: {what}; {instead}. The model is asked again next round.")
        return fallback

    def _fallback(self, ctx: PolicyContext, n: int, parent: int | None, reason: str) -> list[Proposal]:
        if not self.campaign.search_space:
            return []
        samples = OptunaPolicy(self.ledger).propose(ctx, n)
        update = {"parent_trial": parent} if self.campaign.code else {}
        rationale = f"{FALLBACK_RATIONALE}: the model gave no valid proposal this round ({reason[:300]})"
        return [p.model_copy(update={**update, "rationale": rationale}) for p in samples]

    def _context(self, *, slots: int = 0, parent: int | None = None) -> AgentContext:
        base = self._base
        return AgentContext(
            home=base.home,
            tracking=base.tracking,
            max_output_bytes=base.max_output_bytes,
            client_factory=lambda: base.client,
            ledger=self.ledger,
            workspaces=self.workspaces,
            slots=slots,
            parent=parent,
        )

    # --- prompts ----------------------------------------------------------------------

    def _system(self) -> str:
        c = self.campaign
        return prompts.render(
            "system",
            name=c.name,
            objective=describe_objective(c),
            command=" ".join(c.command),
            budget=describe_budget(c),
            search_space=describe_space(c.search_space),
            code=self._code_rules(),
            max_tool_calls=self.settings.max_tool_calls,
            instructions=self._instructions(),
        )

    def _code_rules(self) -> str:
        code = self.campaign.code
        if code is None:
            return ""
        fixed = ", ".join(code.fixed) or "(none)"
        lines = [
            "## Code",
            "",
            f"- Editable (a trial's patch may change these): {', '.join(code.editable)}",
            f"- Fixed (the evaluation every trial is judged by; no patch may touch them): {fixed}",
            "- A trial may carry a `patch` against its parent's version of the editable files (the current best",
            "  trial's code unless you set `parent_trial`): search/replace blocks (the file path on its own line,",
            "  `<<<<<<< SEARCH`, the exact current lines, `=======`, the new lines, `>>>>>>> REPLACE`) or a unified",
            "  diff (`--- a/PATH`, `+++ b/PATH`, `@@` hunks). A better result makes it the parent of later trials.",
        ]
        if self.campaign.confirm is not None:
            lines.append(
                f"- Noise: the leaders are re-run with {self.campaign.confirm.seeds} new seed(s) (trials marked "
                "confirms=#N, scheduled by the runner); a trial's value is the mean of its runs."
            )
        left = FIXED_CHARS
        for rel in code.fixed:
            path = self.campaign.cwd / rel
            if path.is_file() and left > 0:
                text = path.read_text(errors="replace")[:left]
                left -= len(text)
                lines += ["", f"### {rel} (fixed)", "```", text, "```"]
        return "\n".join(lines)

    def _instructions(self) -> str:
        path: Path | None = self.settings.instructions_file
        if path is None:
            return ""
        if not path.is_file():
            log.warning("policy.instructions_file %s is missing; the prompts go without it", path)
            return ""
        return f"\n# Campaign instructions (from {path.name})\n\n{path.read_text(errors='replace')}"

    def _status(self, ctx: PolicyContext, lin: Lineage | None) -> str:
        c = self.campaign
        used = ctx.budget_used
        parts = []
        if used is not None:
            spend = f", ${used.llm_usd:.4f} of model calls" if used.llm_usd else ""
            parts.append(f"Budget used: {used.trials} of {c.budget.max_trials} trials{spend}.")
        ranking = declared_ranking(ctx.trials, c)
        metric = c.objective.metric
        if not ranking:
            parts.append("No complete trial yet.")
        elif ranking[0].n > 1:
            best = ranking[0]
            parts.append(f"Best so far: #{best.trial} {metric}={fmt(best.mean)} (mean of {best.n} runs, sd {fmt(best.sd)}).")
        else:
            parts.append(f"Best so far: #{ranking[0].trial} {metric}={fmt(ranking[0].mean)}.")
        if lin is not None:
            if lin.parent is None:
                parts.append("New code starts from the campaign's original files (no trial kept yet).")
            else:
                mean, runs = lin.means[lin.parent], lin.runs[lin.parent]
                parts.append(f"New code starts from trial #{lin.parent} (mean {metric}={fmt(mean)} over {runs} run(s)).")
        return " ".join(parts)


def build_llm_policy(
    campaign: Campaign,
    ledger: TrialLedger,
    *,
    retry: RetryPolicy = RetryPolicy(),
    skill_context: SkillContext | None = None,
) -> LLMPolicy:
    """The LLM policy of `campaign` (policy.provider, model, base_url, api_key_env): what the
    runner builds for `kind: llm`, and for `kind: auto` when the provider's key is set."""
    try:
        provider = make_provider(campaign.policy, retry=retry)
    except LLMError as exc:
        raise PolicyError(f"campaign {campaign.name!r}: {exc}") from None
    return LLMPolicy(ledger, provider, skill_context=skill_context)
