"""Compact text views of a campaign for the LLM's prompts: the search space, the trials, the
research log, steering messages, the editable code. Every view is bounded, so a long campaign
fits a context window; the agent skills page through the rest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from autoresearch.campaign import Campaign, Note, ParamSpec, TrialRecord, TrialState, best_trial, first_line, ranked

HISTORY_LIMIT = 40
"""Most recent trials listed in full; older ones are summarised by their best few."""
NOTES_LIMIT = 15
"""Most recent research-log entries shown."""
NOTE_CHARS = 1500
"""Longest research-log entry shown before it is cut."""
CODE_CHARS = 60_000
"""Total characters of editable code shown in a propose prompt."""


def fmt(value: Any) -> str:
    """A parameter or metric value, short: floats to 5 significant digits."""
    return f"{value:.5g}" if isinstance(value, float) else str(value)


def describe_space(space: Mapping[str, ParamSpec]) -> str:
    if not space:
        return "(none: trials differ by their code patch only)"
    lines = []
    for name, spec in space.items():
        if spec.type == "categorical":
            lines.append(f"- {name}: one of {spec.choices}")
        else:
            extra = " (log scale)" if spec.log else ""
            step = f", step {spec.step}" if getattr(spec, "step", None) not in (None, 1) else ""
            lines.append(f"- {name}: {spec.type} in [{spec.low}, {spec.high}]{step}{extra}")
    return "\n".join(lines)


def describe_objective(campaign: Campaign) -> str:
    o = campaign.objective
    goal = "maximise" if o.mode.value == "max" else "minimise"
    target = f", target {o.target}" if o.target is not None else ""
    return f"{goal} `{o.metric}`{target}"


def describe_budget(campaign: Campaign) -> str:
    b = campaign.budget
    parts = [f"{b.max_trials} trials", f"{b.max_parallel} at a time"]
    if b.max_gpu_hours is not None:
        parts.append(f"{b.max_gpu_hours} GPU hours")
    if b.max_llm_usd is not None:
        parts.append(f"${b.max_llm_usd} of model calls")
    if b.deadline is not None:
        parts.append(f"deadline {b.deadline}")
    return ", ".join(parts)


def trial_line(t: TrialRecord, metric: str, *, best: int | None = None) -> str:
    """One trial on one line: number, state, value, lineage, params, idea or failure."""
    head = f"#{t.number} {t.state.value}"
    if t.failure_class is not None and t.state is TrialState.failed:
        head += f" ({t.failure_class.value})"
    if t.value is not None:
        head += f" {metric}={fmt(t.value)}"
    if t.number == best:
        head += " [best]"
    if t.parent_trial is not None:
        head += f" parent=#{t.parent_trial}"
    if t.confirms is not None:
        head += f" confirms=#{t.confirms}"
    parts = [head]
    if t.params:
        parts.append(" ".join(f"{k}={fmt(v)}" for k, v in t.params.items()))
    idea = t.hypothesis or t.rationale
    if t.patch:
        parts.append(f"patch ({len(t.patch.splitlines())} lines)")
    if idea:
        parts.append(f"idea: {_one_line(idea, 160)}")
    if t.state in (TrialState.failed, TrialState.cancelled) and t.log_excerpt:
        parts.append(f"log: {_one_line(first_line(t.log_excerpt), 160)}")  # the error, or why it was cancelled
    return " | ".join(parts)


def history_text(trials: Sequence[TrialRecord], campaign: Campaign, *, limit: int = HISTORY_LIMIT) -> str:
    """Every trial, or the last `limit` and the best five of the older ones."""
    if not trials:
        return "(no trials yet)"
    objective = campaign.objective
    best = best_trial(trials, objective)
    best_number = best.number if best else None
    metric = objective.metric
    lines = []
    older, recent = list(trials[:-limit]), list(trials[-limit:])
    if older:
        lines.append(f"({len(older)} older trials not listed; the best of them:)")
        lines.extend(trial_line(t, metric, best=best_number) for t in ranked(older, objective)[:5])
        lines.append("(most recent:)")
    lines.extend(trial_line(t, metric, best=best_number) for t in recent)
    return "\n".join(lines)


def notes_text(notes: Sequence[Note], *, limit: int = NOTES_LIMIT) -> str:
    """The research log, the last `limit` entries, each cut to NOTE_CHARS."""
    if not notes:
        return "(empty: this is the first round)"
    shown = list(notes[-limit:])
    lines = [f"({len(notes) - len(shown)} older entries not shown)"] if len(notes) > len(shown) else []
    for note in shown:
        lines.append(f"- [{note.at:%Y-%m-%d %H:%M} {note.author}] {_cut(note.text, NOTE_CHARS)}")
    return "\n".join(lines)


def steering_text(steering: Sequence[str]) -> str:
    return "\n".join(f"- {message}" for message in steering) if steering else "(none)"


def code_text(files: Mapping[str, str], parent: int | None, *, limit: int = CODE_CHARS) -> str:
    """The editable files at the parent's version, fenced, within `limit` characters in all."""
    origin = "the campaign's starting code" if parent is None else f"trial #{parent}, the current best"
    out = [f"\n## Editable files (the version of {origin}; your patch applies to these)\n"]
    left = limit
    for path, text in files.items():
        shown = text if len(text) <= left else text[:left] + f"\n[... {len(text) - left} characters cut ...]"
        left = max(0, left - len(shown))
        out.append(f"### {path}\n```\n{shown}\n```\n")
    return "\n".join(out)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _one_line(text: str, limit: int) -> str:
    return _cut(" ".join(text.split()), limit)
