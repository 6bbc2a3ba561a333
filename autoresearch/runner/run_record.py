"""What a trial's MLflow run records of its job: when it ran, and its files. Every write is queued
(a `QueuedTracker`): the files are read by the outbox's writer, off the runner's path.

- Times: a run is made ahead of need (`run_pool`), so its start is moved to its job's first
  attempt's start once the job is seen running, and at the end; it ends at its job's last
  attempt's end. A trial whose job never started starts and ends when it ended. (Where the store
  cannot move a start, `MovesRunStart`, only the end is the job's.)
- Artifacts, at the trial's end: `logs/attempt-N.log` for every attempt (a gang's other members:
  `logs/attempt-N.rank-R.log`), each capped at `LOG_ARTIFACT_BYTES` with a note where it was cut,
  credentials (`secret_env`) redacted; `trial/command.json` (the resolved argv, the same as one
  shell line, cwd, params and env); `trial/campaign.yaml` (the config the trial ran with); for a
  code-edit trial `trial/workspace.diff` (its editable files against the campaign's cwd: the whole
  lineage's change; its own patch against its parent is `patch/trial-N.patch`).
"""

from __future__ import annotations

import json
import shlex
import time

import yaml

from autoresearch.campaign import Campaign, TrialLedger, TrialRecord
from compute import Job
from tracking import FileText, MovesRunStart, RunStatus, Tracker, TreeDiff


class RunRecorder:
    """Dates and fills the runs of one campaign's trials from their jobs."""

    def __init__(self, ledger: TrialLedger, tracker: Tracker) -> None:
        self.ledger = ledger
        self.tracker = tracker
        self._mover = tracker if isinstance(tracker, MovesRunStart) and tracker.moves_run_start else None
        self._dated: set[int] = set()
        """Trials whose run start this runner moved to their job's."""
        self._config: tuple[Campaign, str] | None = None
        self._campaign_yaml()  # made now, at the runner's start, not at the first trial's end

    def started(self, trial: TrialRecord, job: Job) -> None:
        """Move the run's start to its job's first attempt's (once per trial and runner)."""
        if trial.mlflow_run_id and job.attempts and trial.number not in self._dated:
            self._start(trial.mlflow_run_id, job.attempts[0].started_at)
            self._dated.add(trial.number)

    def close(self, trial: TrialRecord, job: Job | None, status: RunStatus) -> None:
        """End the run of an ended trial with its job's times, and attach its job's files."""
        run_id = trial.mlflow_run_id
        self._dated.discard(trial.number)
        if not run_id:
            return
        attempts = job.attempts if job else []
        ended = (attempts[-1].ended_at if attempts else None) or time.time()
        self._start(run_id, attempts[0].started_at if attempts else ended)
        if job is not None:
            self._artifacts(trial, job)
        self.tracker.set_status(run_id, status, end_time=int(ended * 1000))

    def _start(self, run_id: str, started_at: float) -> None:
        if self._mover is not None:
            self._mover.set_start_time(run_id, int(started_at * 1000))

    def _artifacts(self, trial: TrialRecord, job: Job) -> None:
        run_id = trial.mlflow_run_id
        assert run_id is not None
        secrets = list(job.spec.secret_env)
        for attempt in job.attempts:
            self.tracker.log_artifact(run_id, FileText(source=attempt.log_path, redact=secrets),
                                      f"logs/attempt-{attempt.number}.log")  # fmt: skip
            for member in attempt.members[1:]:
                self.tracker.log_artifact(run_id, FileText(source=member.log_path, redact=secrets),
                                          f"logs/attempt-{attempt.number}.rank-{member.rank}.log")  # fmt: skip
        spec = job.spec
        command = {"argv": spec.argv, "command": shlex.join(spec.argv), "cwd": spec.cwd, "params": trial.params,
                   "env": spec.env, "job_id": job.id}  # fmt: skip
        self.tracker.log_text(run_id, json.dumps(command, indent=2, default=str) + "\n", "trial/command.json")
        campaign, text = self._campaign_yaml()
        self.tracker.log_text(run_id, text, "trial/campaign.yaml")
        if campaign.code is not None and spec.cwd:
            diff = TreeDiff(old=str(campaign.cwd), new=spec.cwd, paths=list(campaign.code.editable))
            self.tracker.log_artifact(run_id, diff, "trial/workspace.diff")

    def _campaign_yaml(self) -> tuple[Campaign, str]:
        """The config the campaign runs with now, as YAML (made again only after a steering change)."""
        campaign = self.ledger.campaign
        if self._config is None or self._config[0] is not campaign:
            text = yaml.safe_dump(campaign.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
            self._config = (campaign, text)
        return self._config
