"""Running the hidden holdout (`objective.holdout`, docs/results.md): a job of its own per evaluated
trial, whose value goes to the ledger's facts and the trial's MLflow run, never to the policy.

The holdout job is not the trial's job: its own idempotency key (`<trial key>/holdout`), no MLflow
run of its own (no MLFLOW_RUN_ID in its environment, no run label, so `fetch_metrics` cannot read
it), and only the ledger's facts know its id, so no tool the policy has (`read_trial_logs` reads
`TrialRecord.job_id`) can reach its log. Safe to repeat after a crash: a resubmit returns the same
job, and a trial that has a result is not evaluated again.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from autoresearch.campaign import HoldoutResult, Ledger, TrialRecord, TrialState
from autoresearch.campaign.holdout import leaders, render_holdout
from autoresearch.runner.crash import crash_point
from autoresearch.runner.launch import campaign_job, trial_env
from autoresearch.workspace import Workspaces
from compute import Client, Job, JobSpec, JobState
from tracking import HOLDOUT_LABEL, HOLDOUT_METRIC_PREFIX, MetricPoint, Tracker, read_log_points


class HoldoutJobs:
    """Submits, waits for and records the holdout evaluations of one campaign."""

    def __init__(self, ledger: Ledger, client: Client, tracker: Tracker, workspaces: Workspaces | None,
                 on_event: Callable[[str], None]) -> None:  # fmt: skip
        self.ledger = ledger
        self.client = client
        self.tracker = tracker
        self.workspaces = workspaces
        self.on_event = on_event
        self._pending: dict[int, str] = {}
        """Trial number -> its holdout job, submitted by `after_trial` and not recorded yet."""

    @property
    def enabled(self) -> bool:
        return self.ledger.campaign.objective.holdout is not None

    def after_trial(self, trial: TrialRecord) -> None:
        """`holdout.every`: start the evaluation of a trial that just completed."""
        holdout = self.ledger.campaign.objective.holdout
        if holdout is not None and holdout.every and trial.state is TrialState.complete and not self._done(trial.number):
            self._pending[trial.number] = self.submit(trial).id

    def collect(self) -> None:
        """Record the holdout jobs started by `after_trial` that have ended (does not wait)."""
        for number, job_id in list(self._pending.items()):
            job = self.client.get(job_id)
            if job.state.final:
                del self._pending[number]
                self._record(self.ledger.trial(number), job)

    def finish(self) -> None:
        """Evaluate the leaders (every complete trial with `every`) that have no result yet, wait for
        their jobs, and record each value."""
        if not self.enabled:
            return
        due = [t for t in leaders(self.ledger.campaign, self.ledger.trials()) if not self._done(t.number)]
        jobs = {t.number: self.submit(t) for t in due}
        crash_point("holdout.submitted")
        if jobs:
            self.on_event(f"holdout: evaluating trials {', '.join(map(str, jobs))} (jobs {', '.join(j.id for j in jobs.values())})")
        for number, job in jobs.items():
            ended = self.client.wait(job.id)[0]
            self._pending.pop(number, None)
            self._record(self.ledger.trial(number), ended)

    def submit(self, trial: TrialRecord) -> Job:
        """The trial's holdout job (the same one however often it is called)."""
        return self.client.submit(self._spec(trial))

    def _done(self, number: int) -> bool:
        return any(r.trial == number for r in self.ledger.facts().holdouts)

    def _record(self, trial: TrialRecord, job: Job) -> None:
        holdout = self.ledger.campaign.objective.holdout
        assert holdout is not None
        value, error = _read(job, holdout.metric, self.ledger)
        result = HoldoutResult(trial=trial.number, job_id=job.id, value=value, error=error)
        kept = tuple(r for r in self.ledger.facts().holdouts if r.trial != trial.number)
        self.ledger.update_facts(holdouts=(*kept, result))
        if value is not None and trial.mlflow_run_id:
            point = MetricPoint(key=f"{HOLDOUT_METRIC_PREFIX}{holdout.metric}", value=value, step=0)
            self.tracker.log(trial.mlflow_run_id, metrics=[point])
        self.on_event(f"holdout: trial {trial.number} evaluated" + (f" ({error})" if error else ""))

    def _spec(self, trial: TrialRecord) -> JobSpec:
        campaign = self.ledger.campaign
        origin = self.ledger.origin(trial)
        trial_dir, checkpoint_dir = self.ledger.trial_dir(trial.number), self.ledger.checkpoint_dir(origin)
        argv = render_holdout(campaign, trial.params, trial.number, seed_of=origin.number, trial_dir=trial_dir,
                              checkpoint_dir=checkpoint_dir)  # fmt: skip
        cwd = self.workspaces.prepare(trial.number) if self.workspaces is not None else campaign.cwd
        return campaign_job(
            campaign, name=f"{campaign.name}/holdout-{trial.number}", argv=argv,
            env=trial_env(campaign, trial.number, origin.number, trial_dir), cwd=str(cwd),
            labels={"campaign": campaign.name, HOLDOUT_LABEL: str(trial.number)},
            idempotency_key=f"{self.ledger.idempotency_key(trial.number)}/holdout", checkpoint_dir=str(checkpoint_dir),
        )  # fmt: skip


def _read(job: Job, metric: str, ledger: Ledger) -> tuple[float | None, str]:
    """The last value of `metric` the holdout job printed, or (None, why not)."""
    if job.state is not JobState.succeeded:
        return None, f"the holdout job {job.id} {job.state.value}"
    logs = {a.number: Path(a.log_path) for a in job.attempts}
    rules = ledger.campaign.metrics.rules(metric)
    points = [p for p in read_log_points(logs, final=True, rules=rules) if p.key == metric]
    if not points:
        return None, f"the holdout job {job.id} printed no `{metric}`"
    value = points[-1].value
    return (value, "") if math.isfinite(value) else (None, f"the holdout job {job.id} printed {metric}={value}")
