"""LLM usage as run metrics and params: what a campaign's model calls cost, in its `llm-policy` run.

The usage records themselves (calls, totals, prices) live with the LLM code; this module only
knows how they are named in the tracker. Metric names: `llm.call.<field>` per call (step = the
call's index), `llm.<field>` for the campaign and `llm.node.<node>.<field>` per graph node
(step = calls so far).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from tracking.base import Tracker
from tracking.logparse import MetricPoint
from tracking.tags import CAMPAIGN_TAG, LLM_POLICY_ROLE, ROLE_TAG

CALL_FIELDS = ("input_tokens", "output_tokens", "cost_usd", "latency_s", "attempts")
"""The fields of a call logged as `llm.call.<field>`."""


def _key(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_\-]", "_", text) or "unnamed"


def llm_usage_run(tracker: Tracker, experiment: str, campaign: str) -> str:
    """Create the `llm-policy` run of campaign `campaign` in experiment `experiment` (by name)."""
    experiment_id = tracker.experiment(experiment)
    tags = {CAMPAIGN_TAG: campaign, ROLE_TAG: LLM_POLICY_ROLE}
    return tracker.create_run(experiment_id, name=LLM_POLICY_ROLE, tags=tags)


def log_llm_usage(
    tracker: Tracker,
    run_id: str,
    calls: Sequence[tuple[int, Mapping[str, float]]],
    totals: Mapping[str, float],
    by_node: Mapping[str, Mapping[str, float]],
    step: int,
) -> None:
    """Log new calls (index, fields) and the running totals (campaign and per node) at `step`,
    in one batch."""
    points = [
        MetricPoint(key=f"llm.call.{name}", value=float(fields[name]), step=index)
        for index, fields in calls for name in CALL_FIELDS
    ]  # fmt: skip
    groups = [("llm", totals)] + [(f"llm.node.{_key(node)}", t) for node, t in by_node.items()]
    for prefix, values in groups:
        points += [MetricPoint(key=f"{prefix}.{name}", value=float(v), step=step) for name, v in values.items()]
    tracker.log(run_id, metrics=points)


def log_llm_params(tracker: Tracker, run_id: str, values: Mapping[str, str]) -> None:
    """Log which model a policy uses as `llm.<name>` params (the caller redacts secrets first)."""
    tracker.log(run_id, params={f"llm.{name}": value for name, value in values.items()})
