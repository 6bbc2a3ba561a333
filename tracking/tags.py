"""Every MLflow tag and job label name autoresearch writes or reads, in one place.

Run tags are set on MLflow runs; job labels are set on compute jobs (their spec) so that a job
names the run it logs into and the campaign and trial it runs for. Nothing else spells these strings.
"""

from __future__ import annotations

RUN_LABEL = "mlflow_run_id"
"""Job label holding the id of the MLflow run the job logs into."""
EXPERIMENT_LABEL = "mlflow_experiment_id"
"""Job label holding the experiment id of that run."""
CAMPAIGN_LABEL = "campaign"
"""Job label holding the name of the campaign a trial's (or holdout's) job belongs to."""
TRIAL_LABEL = "trial"
"""Job label holding the trial number (a string) of a trial's job."""
HOLDOUT_OF_LABEL = "holdout_of"
"""Job label holding the trial number (a string) whose hidden holdout a holdout job evaluates. The compute
skills (`list_jobs`, `read_logs`, `job_status` ...) withhold such a job: an agent must not read the
evaluation it is judged on, over MCP or anywhere else; people read it with `autoresearch jobs`."""
RULES_LABEL = "metric_rules"
"""Job label holding the `MetricRules` (JSON) its campaign reads the job's log with: the read tools
read it with the same."""

JOB_TAG = "autoresearch.job_id"
"""Run tag holding the id of the job that logs into the run."""
CAMPAIGN_TAG = "autoresearch.campaign"
"""Run tag: the name of the campaign the run belongs to."""
TRIAL_TAG = "autoresearch.trial"
"""Run tag: the trial number (a string) of a trial's run."""
SPARE_TAG = "autoresearch.spare"
"""Run tag: `true` on a run made ahead of need and not yet given to a trial; `false` once given."""
RUN_NAME_TAG = "mlflow.runName"
"""Run tag that holds (and, logged, renames) a run's name."""
CAMPAIGN_STARTED_TAG = "autoresearch.campaign_started"
"""Run tag: when the campaign's ledger was created (tells apart campaigns reusing a name)."""
ROLE_TAG = "autoresearch.role"
"""Run tag: what a run that is no trial is for (`llm-policy`: the LLM usage of a campaign)."""
PARENT_TRIAL_TAG = "autoresearch.parent_trial"
"""Run tag: the trial whose code a code-edit trial starts from."""
CONFIRMS_TAG = "autoresearch.confirms"
"""Run tag: on a confirmation's run, the trial (its origin) it re-runs with a new seed."""
CONFIRM_MEAN_TAG = "autoresearch.confirm.mean"
"""Run tag: on a confirmed origin's run, the mean of its value and its confirmations' values."""
CONFIRM_SD_TAG = "autoresearch.confirm.sd"
"""Run tag: on a confirmed origin's run, the sample standard deviation of those values."""
CONFIRM_N_TAG = "autoresearch.confirm.n"
"""Run tag: on a confirmed origin's run, how many values the mean is over."""
SEPARABLE_TAG = "autoresearch.separable"
"""Run tag: on the winner's run, `true`/`false`: it beats the runner-up's mean by more than 2 sd."""
SOURCE_TAG = "autoresearch.metric_source"
"""Run tag: `mlflow` or `log`, where the runner reads the trial's objective (chosen once)."""
PRUNED_AT_STEP_TAG = "autoresearch.pruned_at_step"
"""Run tag: the step at which the pruner stopped the trial's running job."""
PRUNE_REASON_TAG = "autoresearch.prune_reason"
"""Run tag: why the trial was pruned (which pruner, which metric)."""
VALUE_TAG = "autoresearch.value"
"""Run tag: a completed trial's value, its objective's points read by `objective.aggregate` (the
metric's own latest value in MLflow is its last point)."""

HOLDOUT_METRIC_PREFIX = "holdout/"
"""Metric name prefix of a hidden-holdout value on a trial's run (`holdout/<metric>`): MLflow shows it
to people; `fetch_metrics` never returns it (an agent must not see the holdout it is judged on)."""

SUSPECT_TAG = "autoresearch.suspect"
"""Run tag: why the trial's result is suspect (a degraded node, or a slow run: docs/results.md)."""

LLM_POLICY_ROLE = "llm-policy"
"""The `ROLE_TAG` value of a campaign's LLM usage run."""
