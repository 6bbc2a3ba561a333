"""Launching a trial: its tracked run, then its compute job. Safe to repeat after a crash.

Order: find the run, or take a spare one (`RunPool`, made ahead of need) or create it (tagged
with campaign, trial and the ledger's start, so a rerun finds it) -> `set_mlflow_run` -> `submit` with the trial's idempotency key (compute
returns the existing job for a key it knows) -> `mark_launched`. The run's job-id tag rides
on the evaluator's first metric batch (the job's labels name the run from the start).
Each trial's job gets `<campaign dir>/checkpoints/<ledger identity>/trial-N` as AR_CHECKPOINT_DIR;
a trial that resumes a stopped one (`resume_of`) gets that trial's folder and seed, and starts
once the stopped trial's job has ended (written its checkpoint). A re-run of a suspect trial
(`suspect_rerun_of`) avoids the nodes that trial ran on (`JobSpec.avoid_nodes`). Each trial also gets a folder
of its own, `<campaign dir>/trials/<ledger identity>/trial-N` (AR_TRIAL_DIR, `{trial_dir}`),
made at launch and kept across its attempts.
Killed between any two steps, the next runner redoes the trial's launch
and ends with the same run and the same job.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from autoresearch.campaign import Campaign, Ledger, TrialRecord
from autoresearch.runner.crash import crash_point
from autoresearch.runner.errors import check_runs_kept
from autoresearch.runner.run_pool import RunPool
from autoresearch.workspace import Workspaces, log_lineage
from compute import Client, Job, JobSpec
from compute.jobenv import AR_CAMPAIGN, AR_SEED, AR_TRIAL, AR_TRIAL_DIR
from tracking import (
    CAMPAIGN_LABEL, CAMPAIGN_STARTED_TAG, CAMPAIGN_TAG, RULES_LABEL, RUN_NAME_TAG, SPARE_TAG, TRIAL_LABEL, TRIAL_TAG,
    QueuedTracker, Tracker, describe_datasets, run_env, run_labels,
)  # fmt: skip


def job_argv(argv: list[str], image: str | None = None) -> list[str]:
    """A bare `python` / `python3` runs as this interpreter (the one autoresearch runs in, with its
    packages), whatever `python` means on the daemon's PATH. Give a path to use another one.
    In a container image, `python` is the image's own."""
    if image is None and argv and argv[0] in ("python", "python3"):
        return [sys.executable, *argv[1:]]
    return argv


def trial_env(campaign: Campaign, trial: int, seed_of: int, trial_dir: Path) -> dict[str, str]:
    """The variables every job of a trial sees (its own and its holdout's), over the config's `env`."""
    return {**campaign.env, AR_CAMPAIGN.name: campaign.name, AR_TRIAL.name: str(trial),
            AR_SEED.name: str(campaign.trial_seed(seed_of)), AR_TRIAL_DIR.name: str(trial_dir)}  # fmt: skip


def campaign_job(campaign: Campaign, *, name: str, argv: list[str], env: dict[str, str], cwd: str,
                 labels: dict[str, str], idempotency_key: str, checkpoint_dir: str,
                 avoid_nodes: list[str] | None = None) -> JobSpec:
    """A job of `campaign` (a trial's, or its holdout's): what differs from job to job is given,
    the rest comes from the campaign's `compute` section, `secret_env` and `data`, here only."""
    return JobSpec(
        **campaign.compute.spec_fields(),
        name=name,
        argv=job_argv(argv, campaign.compute.image),
        env=env,
        secret_env=list(campaign.secret_env),
        cwd=cwd,
        labels=labels,
        avoid_nodes=avoid_nodes or [],
        idempotency_key=idempotency_key,
        checkpoint_dir=checkpoint_dir,
        data={name: str(dataset.path) for name, dataset in campaign.data.items()},
    )


def _run_params(trial: TrialRecord) -> dict[str, str]:
    return {key: str(value) for key, value in trial.params.items()}


class Launcher:
    """Turns proposed trials of one campaign into MLflow runs and compute jobs."""

    def __init__(self, ledger: Ledger, client: Client, tracker: Tracker, *, on_error: Callable[[str], None]) -> None:
        self.ledger = ledger
        self.client = client
        self.tracker = tracker
        """Runs are created at once; params and lineage may be queued (a `QueuedTracker`)."""
        self.experiment_id = self._experiment()
        self._started = ledger.started_at.isoformat()
        self.known_at_start = max((t.number for t in ledger.trials()), default=-1)
        """Only trials that existed before this runner may have a run that a killed runner made (or read)."""
        trials = ledger.trials()
        self.pool = RunPool(
            tracker, self.experiment_id, self._tags(None), size=2 * ledger.campaign.budget.max_parallel,
            limit=ledger.campaign.budget.max_trials - len(trials), on_error=on_error,
            recorded={t.mlflow_run_id for t in trials if t.mlflow_run_id}, left_behind=not ledger.new,
            wait_turn=tracker.wait_released if isinstance(tracker, QueuedTracker) else lambda: None,
        )  # fmt: skip
        """Spare runs, so a launch does not wait for MLflow to create one; `close` deletes the unused."""
        self.workspaces = Workspaces(ledger) if ledger.campaign.code else None
        """Code-edit campaigns: each trial runs in its own workspace (its parent's code + its patch)."""

    def _experiment(self) -> str:
        experiment_id = self.tracker.experiment(self.ledger.campaign.experiment)
        check_runs_kept(self.tracker, self.ledger, experiment_id)
        if self.ledger.mlflow_experiment_id != experiment_id:
            self.ledger.set_mlflow_experiment(experiment_id)
        return experiment_id

    def launch(self, trial: TrialRecord) -> Job:
        """Start trial `trial` (state proposed): same run and same job however often it is called."""
        number = trial.number
        if self.workspaces is not None:
            self.workspaces.prepare(number)  # PatchError: the caller fails the trial as bad_patch
        orphan = None if trial.mlflow_run_id or number > self.known_at_start else self._find_run(number)
        run_id = trial.mlflow_run_id or orphan or self._create_run(trial)
        if trial.mlflow_run_id != run_id:
            self.ledger.set_mlflow_run(number, run_id)
        elif number <= self.known_at_start:  # a spare's naming may have been queued when a runner died
            self._name_run(number, run_id, _run_params(trial))
        if trial.resume_of is not None:
            stopped = self.ledger.trial(trial.resume_of)
            if stopped.job_id:
                self.client.wait(stopped.job_id)  # stopped with SIGTERM: its checkpoint is written once it ends
        job = self.client.submit(self._spec(trial, run_id, self.ledger.origin(trial)))
        crash_point("launch.submitted")
        self.ledger.mark_launched(number, job.id)
        return job

    def close(self) -> None:
        """Delete the spare runs not used (call before the tracker closes)."""
        self.pool.close()

    def _tags(self, number: int | None) -> dict[str, str]:
        tags = {CAMPAIGN_TAG: self.ledger.campaign.name, CAMPAIGN_STARTED_TAG: self._started}
        return tags if number is None else {**tags, TRIAL_TAG: str(number)}

    def _name_run(self, number: int, run_id: str, params: dict[str, str] | None = None) -> None:
        """Tag a spare run as trial `number`'s (with its parameters: one queued write)."""
        tags = {**self._tags(number), SPARE_TAG: "false", RUN_NAME_TAG: f"trial-{number}"}
        self.tracker.log(run_id, tags=tags, params=params)

    def _find_run(self, number: int) -> str | None:
        """A run made for this trial by a runner killed before it recorded the run id
        (a trial this runner proposed cannot have one: it would have died with it)."""
        runs = self.tracker.find_runs(self.experiment_id, self._tags(number), limit=1)
        return runs[0] if runs else None

    def _create_run(self, trial: TrialRecord) -> str:
        params = _run_params(trial)
        run_id = self.pool.take()
        if run_id is None:
            run_id = self.tracker.create_run(
                self.experiment_id, name=f"trial-{trial.number}", tags=self._tags(trial.number)
            )
            if params:
                self.tracker.log(run_id, params=params)
        else:
            self._name_run(trial.number, run_id, params)  # queued
        log_lineage(self.tracker, run_id, trial)
        if self.ledger.campaign.data:
            data = {name: dataset.path for name, dataset in self.ledger.campaign.data.items()}
            self.tracker.log_datasets(run_id, describe_datasets(data))
        return run_id

    def _avoid(self, trial: TrialRecord) -> list[str]:
        """A re-run of a suspect trial avoids the nodes that trial ran on."""
        if trial.suspect_rerun_of is None:
            return []
        suspect = self.ledger.trial(trial.suspect_rerun_of).provenance
        return suspect.nodes if suspect else []

    def _spec(self, trial: TrialRecord, run_id: str, origin: TrialRecord) -> JobSpec:
        campaign = self.ledger.campaign
        trial_dir = self.ledger.trial_dir(trial.number)
        trial_dir.mkdir(parents=True, exist_ok=True)
        env = {**trial_env(campaign, trial.number, origin.number, trial_dir),
               **run_env(self.tracker, self.experiment_id, run_id, self.client.home)}  # fmt: skip
        labels = {CAMPAIGN_LABEL: campaign.name, TRIAL_LABEL: str(trial.number), **run_labels(self.experiment_id, run_id),
                  RULES_LABEL: campaign.metric_rules.model_dump_json()}  # fmt: skip
        return campaign_job(
            campaign, name=f"{campaign.name}/trial-{trial.number}",
            argv=campaign.render_command(trial.params, trial.number, seed_of=origin.number, trial_dir=trial_dir),
            env=env, cwd=str(self.workspaces.path(trial.number) if self.workspaces else campaign.cwd), labels=labels,
            idempotency_key=self.ledger.idempotency_key(trial.number),
            checkpoint_dir=str(self.ledger.checkpoint_dir(origin)), avoid_nodes=self._avoid(trial),
        )  # fmt: skip
