"""The LLM policy's own skills: read the campaign's trials, ask Optuna, and finish a step.

They run with an `AgentContext`: a SkillContext that also carries the campaign's ledger and,
while proposing, how many trials may be proposed and from which parent. The finish skills
(`propose_trials`, `write_research_log`) validate their input and leave the result on the
context; a validation problem comes back to the model as a SkillError it can act on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import optuna
from pydantic import BaseModel, ConfigDict, Field

from autoresearch.campaign import Proposal, TrialFailure, TrialLedger, TrialRecord, TrialState, check_params, ranked
from autoresearch.campaign.compare import MAX_COMPARED, Comparison, UnknownTrial, chosen, compare, downsample
from autoresearch.campaign.suspects import suspect_reasons
from autoresearch.workspace import PatchError, Workspaces
from skills import (
    READ_ONLY, ErrorCode, Index, SkillContext, SkillFailure, SkillInput, SkillOutput, SkillRegistry, builtin_registry,
)
from skills.logs import ReadLogsInput, ReadLogsOutput, read_logs

Text = Annotated[str, Field(min_length=1, max_length=4000)]


class ResearchLogEntry(BaseModel):
    """What the model wrote at a replan."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    learned: str
    next: str
    stop: bool = False
    reason: str = ""


@dataclass
class AgentContext(SkillContext):
    """A SkillContext for one step of the LLM policy."""

    ledger: TrialLedger | None = None
    """The campaign's ledger (read only, except through the finish skills' results)."""
    workspaces: Workspaces | None = None
    """Code-edit campaigns: where patches are checked against the parent's files."""
    slots: int = 0
    """Propose: the most trials `propose_trials` accepts."""
    parent: int | None = None
    """Propose: the trial new code starts from unless a proposal names another."""
    proposals: list[Proposal] | None = None
    """Set by a valid `propose_trials` call."""
    log_entry: ResearchLogEntry | None = None
    """Set by a valid `write_research_log` call."""
    cut_note: str | None = None
    """Set when `propose_trials` got more trials than free slots and kept only the first ones."""


def _ledger(ctx: SkillContext) -> TrialLedger:
    if not isinstance(ctx, AgentContext) or ctx.ledger is None:
        raise SkillFailure(ErrorCode.failed, "this skill works only inside a campaign's LLM policy (needs the ledger)")
    return ctx.ledger


# --- reading trials --------------------------------------------------------------------


class TrialRow(BaseModel):
    """A trial in brief."""

    model_config = ConfigDict(frozen=True)

    number: int
    state: TrialState
    value: float | None = None
    params: dict[str, Any] = {}
    parent_trial: int | None = None
    confirms: int | None = None
    """A confirmation: the trial it re-runs with a new seed."""
    has_patch: bool = False
    hypothesis: str = ""
    failure_class: TrialFailure | None = None
    suspect_reason: str | None = None
    """Why its result may be biased by its hardware (a degraded node, a slow run); None: not suspect."""

    @classmethod
    def of(cls, t: TrialRecord, suspect: dict[int, str] | None = None) -> TrialRow:
        return cls(
            number=t.number, state=t.state, value=t.value, params=t.params, parent_trial=t.parent_trial,
            confirms=t.confirms, has_patch=bool(t.patch), hypothesis=t.hypothesis[:300], failure_class=t.failure_class,
            suspect_reason=(suspect or {}).get(t.number),
        )  # fmt: skip


class ListTrialsInput(SkillInput):
    state: TrialState | None = None
    """Only trials in this state; default all."""
    offset: Index = 0
    """Skip this many (oldest first)."""
    limit: Annotated[int, Field(ge=1, le=100)] = 20
    """At most this many."""


class ListTrialsOutput(SkillOutput):
    total: int
    """Trials matching the filter."""
    trials: list[TrialRow]
    next_offset: int | None = None
    """Offset of the next page; None at the end."""


def list_trials(ctx: SkillContext, args: ListTrialsInput) -> ListTrialsOutput:
    """List the campaign's trials (oldest first, paginated), optionally only those in one state."""
    ledger = _ledger(ctx)
    every = ledger.trials()
    suspect = suspect_reasons(every, ledger.campaign.validity.min_speed_ratio)
    trials = [t for t in every if args.state is None or t.state is args.state]
    page = trials[args.offset : args.offset + args.limit]
    end = args.offset + len(page)
    rows = [TrialRow.of(t, suspect) for t in page]
    return ListTrialsOutput(total=len(trials), trials=rows, next_offset=end if end < len(trials) else None)


class BestTrialsInput(SkillInput):
    k: Annotated[int, Field(ge=1, le=50)] = 5
    """How many."""


class BestTrialsOutput(SkillOutput):
    trials: list[TrialRow]
    """Complete trials, best first."""


def best_trials(ctx: SkillContext, args: BestTrialsInput) -> BestTrialsOutput:
    """The k best complete trials, best first."""
    ledger = _ledger(ctx)
    trials = ledger.trials()
    suspect = suspect_reasons(trials, ledger.campaign.validity.min_speed_ratio)
    return BestTrialsOutput(trials=[TrialRow.of(t, suspect) for t in ranked(trials, ledger.campaign.objective)[: args.k]])


class TrialDetailsInput(SkillInput):
    number: Index
    """The trial number."""
    max_points: Annotated[int, Field(ge=2, le=200)] = 20
    """At most this many points of the intermediate curve (first, last and best always kept)."""


class TrialDetailsOutput(SkillOutput):
    trial: TrialRow
    rationale: str
    expected_effect: str
    patch: str | None
    curve: list[tuple[int, float]]
    """(step, value) of the objective while it ran, downsampled."""
    curve_points: int
    """Points the full curve has."""
    log_excerpt: str | None
    """Failed: the end of the log. Cancelled: why."""
    job_id: str | None
    mlflow_run_id: str | None


def trial_details(ctx: SkillContext, args: TrialDetailsInput) -> TrialDetailsOutput:
    """One trial in full: params, value, patch, hypothesis, its intermediate curve, and for a failed
    trial the failure class and the end of its log."""
    ledger = _ledger(ctx)
    numbers = [t.number for t in ledger.trials()]
    if args.number not in numbers:
        raise SkillFailure(ErrorCode.not_found, f"no trial {args.number}; trials are 0..{len(numbers) - 1}", "number")
    t = ledger.trial(args.number)
    better = ledger.campaign.objective.better
    return TrialDetailsOutput(
        trial=TrialRow.of(t), rationale=t.rationale, expected_effect=t.expected_effect, patch=t.patch,
        curve=downsample(t.intermediate_values, args.max_points, better), curve_points=len(t.intermediate_values),
        log_excerpt=t.log_excerpt, job_id=t.job_id, mlflow_run_id=t.mlflow_run_id,
    )  # fmt: skip


class CompareTrialsInput(SkillInput):
    numbers: Annotated[list[Index], Field(min_length=2, max_length=MAX_COMPARED)]
    """The trials to compare (2 to 10), the first one the reference for patch diffs."""


class CompareTrialsOutput(SkillOutput):
    comparison: Comparison


def compare_trials(ctx: SkillContext, args: CompareTrialsInput) -> CompareTrialsOutput:
    """Compare trials side by side: which params differ, final and best values, each curve's first,
    last and best point and the slope of its last points (still improving?), and for code-edit trials
    how each patch differs from the first trial's."""
    ledger = _ledger(ctx)
    try:
        trials = chosen(ledger.trials(), args.numbers)
    except UnknownTrial as exc:
        raise SkillFailure(ErrorCode.not_found, str(exc), "numbers") from None
    except ValueError as exc:
        raise SkillFailure(ErrorCode.invalid_arguments, str(exc), "numbers") from None
    return CompareTrialsOutput(comparison=compare(trials, ledger.campaign.objective))


class SuggestInput(SkillInput):
    n: Annotated[int, Field(ge=1, le=10)] = 1
    """How many suggestions."""


class SuggestOutput(SkillOutput):
    suggestions: list[dict[str, Any]]
    """Parameter sets TPE would try next, in order."""
    based_on: int
    """Complete trials the sampler learned from."""


def suggest_with_optuna(ctx: SkillContext, args: SuggestInput) -> SuggestOutput:
    """What Optuna's TPE sampler would try next, learned from the complete trials. Costs no trial:
    it runs on a throwaway in-memory copy of the study."""
    ledger = _ledger(ctx)
    campaign = ledger.campaign
    space = campaign.search_space
    if not space:
        raise SkillFailure(ErrorCode.failed, "this campaign has no search space: nothing for Optuna to suggest")
    trials = ledger.trials()
    seed = None if campaign.policy.seed is None else campaign.policy.seed + len(trials)
    sampler = optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True)
    study = optuna.create_study(direction=campaign.objective.direction, sampler=sampler)
    distributions = {name: spec.distribution() for name, spec in space.items()}
    based_on = 0
    for t in trials:
        if t.state is TrialState.complete and t.value is not None and set(t.params) == set(space):
            study.add_trial(optuna.trial.create_trial(params=t.params, distributions=distributions, value=t.value))
            based_on += 1
    suggestions = []
    for _ in range(args.n):
        trial = study.ask()
        suggestions.append({name: spec.suggest(trial, name) for name, spec in space.items()})
    return SuggestOutput(suggestions=suggestions, based_on=based_on)


class TrialLogsInput(SkillInput):
    number: Index
    """The trial number."""
    tail: Annotated[int, Field(ge=1, le=2000)] | None = None
    """The last N lines (default 100)."""
    grep: Annotated[str, Field(min_length=1, max_length=500)] | None = None
    """Only lines matching this Python regex."""


def read_trial_logs(ctx: SkillContext, args: TrialLogsInput) -> ReadLogsOutput:
    """Read the log of a trial's job: its last lines, or the lines matching a regex."""
    ledger = _ledger(ctx)
    trial = ledger.trial(args.number)
    if trial.job_id is None:
        message = f"trial {args.number} has no job yet (it is {trial.state.value})"
        raise SkillFailure(ErrorCode.not_found, message, "number")
    tail = args.tail if args.grep is None else None
    return read_logs(ctx, ReadLogsInput(job_id=trial.job_id, tail=tail, grep=args.grep))


# --- finishing a step ------------------------------------------------------------------


class TrialIdea(SkillInput):
    params: dict[str, float | int | str | bool | None] = {}
    """A value for every search-space parameter (empty when the campaign has no search space)."""
    patch: Annotated[str, Field(max_length=100_000)] | None = None
    """Code-edit campaigns: search/replace blocks or a unified diff against the parent's editable files."""
    parent_trial: Index | None = None
    """Code-edit campaigns: the complete trial whose code to start from; default the current best."""
    hypothesis: Text
    """What this trial tests."""
    expected_effect: Text
    """What you expect the objective to do, and roughly by how much."""
    rationale: Annotated[str, Field(max_length=4000)] = ""
    """Why this trial now, given the history."""


class ProposeTrialsInput(SkillInput):
    trials: Annotated[list[TrialIdea], Field(min_length=1, max_length=64)]
    """The trials to run, at most as many as the prompt allows."""


class ProposeTrialsOutput(SkillOutput):
    accepted: int
    """Trials accepted; they will be launched."""
    note: str | None = None
    """Set when some trials were left out (more than the free slots): which, and what to do."""


def propose_trials(ctx: SkillContext, args: ProposeTrialsInput) -> ProposeTrialsOutput:
    """Finish proposing: the trials to run next, each with params inside the search space and/or a
    code patch, a hypothesis and an expected effect. Errors name every problem; fix them and call again."""
    ledger = _ledger(ctx)
    assert isinstance(ctx, AgentContext)
    ideas, cut_note = args.trials[: max(ctx.slots, 0)], None
    if len(args.trials) > len(ideas):
        cut_note = (
            f"propose_trials got {len(args.trials)} trials but only {len(ideas)} slot(s) were free: the first "
            f"{len(ideas)} were kept and trials[{len(ideas)}:] dropped; propose those again when slots free up"
        )
    if not ideas:
        raise SkillFailure(ErrorCode.invalid_arguments, "no slot is free now: propose no trial", "trials")
    campaign = ledger.campaign
    known = {t.number: t for t in ledger.trials()}
    seen = {_key(t.params, t.patch, t.parent_trial) for t in known.values() if t.state is not TrialState.cancelled}
    problems: list[str] = []
    proposals: list[Proposal] = []
    for i, idea in enumerate(ideas):
        where = f"trials[{i}]"
        try:
            params = check_params(campaign.search_space, idea.params)
        except ValueError as exc:
            problems.append(f"{where}.params: {exc}")
            continue
        parent = ctx.parent if idea.parent_trial is None else idea.parent_trial
        if campaign.code is None and (idea.patch or idea.parent_trial is not None):
            problems.append(f"{where}: this campaign has no editable code (no `code:` section); send params only")
            continue
        if idea.parent_trial is not None and (parent not in known or known[parent].state is not TrialState.complete):
            problems.append(f"{where}.parent_trial: trial {parent} is not complete; omit it to start from the best")
            continue
        if idea.patch and ctx.workspaces is not None:
            try:
                ctx.workspaces.check(idea.patch, parent)
            except PatchError as exc:
                problems.append(f"{where}.patch: {exc}")
                continue
        key = _key(params, idea.patch, parent if campaign.code else None)
        if key in seen:
            problems.append(f"{where}: the same params and code as an earlier trial; change something")
            continue
        seen.add(key)
        proposals.append(Proposal(
            params=params, patch=idea.patch, parent_trial=parent if campaign.code else None,
            rationale=idea.rationale, hypothesis=idea.hypothesis, expected_effect=idea.expected_effect,
        ))  # fmt: skip
    if problems:
        raise SkillFailure(ErrorCode.invalid_arguments, "no trial was accepted: " + " | ".join(problems), "trials")
    ctx.proposals = proposals
    ctx.cut_note = cut_note
    return ProposeTrialsOutput(accepted=len(proposals), note=cut_note)


def _key(params: dict[str, Any], patch: str | None, parent: int | None) -> tuple[str, str, int | None]:
    return repr(sorted(params.items())), patch or "", parent


class ResearchLogInput(SkillInput):
    learned: Text
    """What the results since the last entry show (cite trial numbers and values)."""
    next: Text
    """What to try next, and why."""
    stop: bool = False
    """True to end the campaign: further trials are unlikely to help."""
    reason: Annotated[str, Field(max_length=2000)] = ""
    """Why continue or stop (required when stop is true)."""


class ResearchLogOutput(SkillOutput):
    recorded: bool


def write_research_log(ctx: SkillContext, args: ResearchLogInput) -> ResearchLogOutput:
    """Finish the replan: record what was learned and what comes next in the research log (it is
    shown to you at every later step, and in the report); optionally stop the campaign."""
    _ledger(ctx)
    assert isinstance(ctx, AgentContext)
    if args.stop and not args.reason.strip():
        raise SkillFailure(ErrorCode.invalid_arguments, "stop is true: give the reason for stopping", "reason")
    ctx.log_entry = ResearchLogEntry(learned=args.learned, next=args.next, stop=args.stop, reason=args.reason)
    return ResearchLogOutput(recorded=True)


CAMPAIGN_SKILLS = (list_trials, best_trials, trial_details, compare_trials, suggest_with_optuna, read_trial_logs)
"""The read-only campaign skills; also served by `skills ... --campaign NAME` and `mcp --campaign NAME`."""
AGENT_SKILLS = (*CAMPAIGN_SKILLS, propose_trials, write_research_log)
READ_TOOLS = (
    "list_trials", "best_trials", "trial_details", "compare_trials", "read_trial_logs", "suggest_with_optuna",
    "job_status", "fetch_metrics",
)  # fmt: skip
"""Tools offered in both steps (compute skills that change jobs are not offered)."""


def agent_registry() -> SkillRegistry:
    """The built-in compute skills and the policy's own."""
    return _with(AGENT_SKILLS)


def campaign_registry() -> SkillRegistry:
    """The built-in compute skills and the read-only campaign skills (for people and outside agents)."""
    return _with(CAMPAIGN_SKILLS)


def _with(extra: tuple[Any, ...]) -> SkillRegistry:
    registry = builtin_registry()
    for fn in extra:
        registry.add(fn, hints=READ_ONLY if fn in CAMPAIGN_SKILLS else None)
    return registry
