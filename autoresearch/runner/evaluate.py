"""Judging running trials from their jobs: intermediate values, pruning, and verdicts.

A verdict is the ledger's (complete, pruned, failed, cancelled; the first one wins), so
judging a trial again after a crash changes nothing. `reconcile` cancels the jobs of trials
that ended while their job went on (a runner killed in between).

Pruning is honest: only a running job is pruned, and a trial is pruned only when its job was
stopped by that. The pruner's verdict asks compute to cancel the job (reason `trial N pruned at
step S: ...`); the trial stays running until its job ends. Ended `cancelled`, the trial is
pruned and its run tagged with the step and the reason (`PRUNED_AT_STEP_TAG`,
`PRUNE_REASON_TAG`); ended on its own first (it had finished), or stopped only after it reported
the campaign's last step (`campaign_end`: it ran to its end), its value is its result.
The ask is recorded in the ledger first (`TrialRecord.prune_step`): a runner restarted in between
reads it there (and asks again if the job still runs: `reconcile`), never from the cancel reason.

A trial's value, and each intermediate value the pruner sees, is `objective.aggregate` of its points
(up to that step); a completed trial's run is tagged with it (`VALUE_TAG`). The pruner's gates and
its end rule (never at or after the campaign's last step) are `OptunaPruning`'s.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from autoresearch.campaign import Ledger, PrunerKind, TrialFailure, TrialRecord, TrialState, resolve_aggregate
from autoresearch.campaign.suspects import suspect_reasons
from autoresearch.policy import Policy, PruneDecision, Pruning, campaign_end
from autoresearch.runner.crash import crash_point
from autoresearch.runner.failures import failed_excerpt, no_metric_excerpt
from autoresearch.runner.provenance import provenance_of
from autoresearch.runner.run_record import RunRecorder
from compute import AttemptOutcome, Client, ComputeError, FailureClass, Job, JobState, Node
from compute.attempt_logs import read_tail
from compute.health.rules import DISK_FULL_RULE
from tracking import (
    CAMPAIGN_TAG,
    JOB_TAG,
    PRUNE_REASON_TAG,
    VALUE_TAG,
    PRUNED_AT_STEP_TAG,
    SUSPECT_TAG,
    MetricReader,
    RunStatus,
    Tracker,
    tag_run_with_job,
)

_FAILURE = {FailureClass.user: TrialFailure.user, FailureClass.resource: TrialFailure.resource,
            FailureClass.infra: TrialFailure.infra}  # fmt: skip
EXCERPT_BYTES = 2000
"""How much of the end of a trial's log its failure excerpt is taken from."""
DISK_FULL_CANCEL = "its job ran out of disk space (not counted toward budget.max_trials)"
"""How a trial whose job died of a full disk is cancelled (the campaign then pauses)."""
_LIVE = (JobState.running.value, JobState.pending.value)
"""Job states whose metrics `check` reads when due: a job last seen pending may be running by now
(the runner's wait ignores starts)."""
_RUN_STATUS = {TrialState.complete: RunStatus.FINISHED, TrialState.failed: RunStatus.FAILED}


def gpu_seconds(job: Job, now: float | None = None) -> float:
    """Slot time of a job: GPU slots x seconds, summed over its attempts."""
    now = now or time.time()
    return sum(((a.ended_at or now) - a.started_at) * len(a.gpus) for a in job.attempts)


def slot_nodes(job: Job) -> set[str]:
    """The nodes on which the job's attempts held GPU slots (every member of a gang's)."""
    return {node for a in job.attempts for node, gpus in ([(m.node, m.gpus) for m in a.members] or [(a.node, a.gpus)]) if gpus}


class Evaluator:
    """Reads the jobs of a campaign's running trials and ends the trials that are done."""

    def __init__(
        self,
        ledger: Ledger,
        client: Client,
        policy: Policy,
        tracker: Tracker,
        *,
        live_sync_s: float = 10.0,
        new_runs_after: int | None = None,
    ) -> None:
        self.ledger = ledger
        self.client = client
        self.policy = policy
        self.tracker = tracker
        """Writes may be queued (a `QueuedTracker`): nothing here waits for them."""
        objective = ledger.campaign.objective
        self.reader = MetricReader(tracker, objective.metric, objective.source, ledger.campaign.metric_rules)
        self.new_runs_after = new_runs_after
        """Trials numbered above it got their run from this runner (`Launcher.known_at_start`): no
        reader stored anything on it, so a `log` source does not read it back first."""
        self.live_sync_s = live_sync_s
        self.records = RunRecorder(ledger, tracker)
        """Dates each trial's run by its job and attaches the job's files at its end."""
        """Without a pruner, running trials' metrics are read (and logged to MLflow) this often."""
        self._reported: dict[int, set[int]] = {}
        self._read_at: dict[int, float] = {}
        self._pruning: dict[int, int] = {}
        """Trials whose job this runner asked to stop for the pruner -> the step judged."""
        self._node_info: dict[str, Node] = {}
        """Compute nodes by name (virtual or not), for the trials' provenance."""
        self._suspect_tagged: dict[int, str] = {}
        """Trial -> the suspect reason its run was tagged with by this runner."""

    @property
    def pruner(self) -> Pruning | None:
        """The policy, when it prunes and the campaign's pruner is not `none`. Intermediate values go
        to the ledger either way (the learning curves), each read's new steps in one write."""
        if isinstance(self.policy, Pruning) and self.ledger.campaign.policy.pruner.kind is not PrunerKind.none:
            return self.policy
        return None

    def check(
        self, trials: list[TrialRecord], known: Mapping[str, str] | None = None, changed: Sequence[Job] = ()
    ) -> tuple[list[TrialRecord], dict[str, str]]:
        """Look at each running trial's job once: report new values, prune, end finished trials.
        Stops at the first trial that ends, so its slot is refilled before the next one is judged
        (jobs started together end together; refilling one by one staggers them).

        `known` (job id -> state, what the last check returned) and `changed` (the jobs
        `Client.wait_for_change` returned since): a job in `known` and not in `changed` is not
        read again unless its metrics are due.

        Returns the trials that ended and the job states seen (for `Client.wait_for_change`).
        """
        ended: list[TrialRecord] = []
        seen: dict[str, str] = {}
        fresh = {job.id: job for job in changed}
        for trial in trials:
            if trial.job_id is None:
                continue
            if ended:  # judged after the refill; kept as last known, so a change since shows at once
                if known is not None and trial.job_id in known:
                    seen[trial.job_id] = known[trial.job_id]
                continue
            job = fresh.get(trial.job_id)
            if job is None and known is not None and not self._must_read(trial, known):
                seen[trial.job_id] = known[trial.job_id]  # unchanged, and nothing to read
                continue
            job = job or self.client.get(trial.job_id)
            seen[job.id] = job.state.value
            if job.state.final:
                ended.append(self._finish(trial, job))
            elif trial.number in self._pruning:
                continue  # its stop was asked for: the verdict comes when the job ends
            elif job.state is JobState.running and trial.mlflow_run_id and self._due(trial.number):
                self.records.started(trial, job)
                values = self._read(trial, job, final=False)
                pruner = self.pruner
                if self._report(trial, values) and pruner:
                    stopped = self._prune(pruner, trial, job)
                    if stopped is not None:
                        ended.append(stopped)
        return ended, seen

    def _read(self, trial: TrialRecord, job: Job, *, final: bool) -> list[tuple[int, float]]:
        assert trial.mlflow_run_id is not None
        new_run = self.new_runs_after is not None and trial.number > self.new_runs_after
        return self.reader.read(trial.number, trial.mlflow_run_id, job, final=final, tags={JOB_TAG: job.id},
                                new_run=new_run)  # fmt: skip

    def _running(self, values: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """(step, the trial's value as of that step) for its points: `objective.aggregate` of the
        points up to each step; the last is the trial's value."""
        objective = self.ledger.campaign.objective
        return resolve_aggregate(objective.aggregate).running(values, objective.direction == "maximize")

    def _report(self, trial: TrialRecord, values: list[tuple[int, float]]) -> bool:
        """Tell the ledger the steps it has not seen (in one write), each as the aggregate of the
        points up to it (`objective.aggregate`: the pruner judges what the trial's value would be,
        and the learning curves show it); True when there were new ones."""
        done = self._reported.setdefault(trial.number, set(trial.intermediate_values))
        fresh = {step: value for step, value in self._running(values) if step not in done}
        if fresh:
            self.ledger.report_steps(trial.number, fresh)
            done.update(fresh)
        return bool(fresh)

    def _must_read(self, trial: TrialRecord, known: Mapping[str, str]) -> bool:
        """Whether `check` reads the job of `trial` though `Client.wait_for_change` did not return
        it: a job not in `known`, one known to have ended, or a running (or last seen pending) one
        whose metrics are due (see `_due`)."""
        state = known.get(trial.job_id or "")
        if state is None or JobState(state).final:
            return True
        return (state in _LIVE and trial.number not in self._pruning and trial.mlflow_run_id is not None
                and self._due(trial.number, peek=True))  # fmt: skip

    def _due(self, number: int, *, peek: bool = False) -> bool:
        """Whether to read a running trial's metrics now: every poll with a pruner, else every live_sync_s."""
        now = time.monotonic()
        last = self._read_at.setdefault(number, now)
        if self.pruner is None and now - last < self.live_sync_s:
            return False
        if not peek:
            self._read_at[number] = now
        return True

    def _prune(self, pruner: Pruning, trial: TrialRecord, job: Job) -> TrialRecord | None:
        """Ask a losing trial's running job to stop; the trial's verdict if its job had ended."""
        current = self.ledger.trial(trial.number)
        if pruner.judge(current) is not PruneDecision.prune:
            return None
        step = max(current.intermediate_values)
        reason = f"trial {trial.number} pruned at step {step}: {self._why_pruned(step)}"
        self.ledger.mark_pruning(trial.number, step)  # first: a runner restarted before the job ends reads it
        job = self.client.cancel(job.id, reason=reason)
        if job.state.final:
            return self._finish(trial, job)  # it ended on its own first: its last value is its result
        self._pruning[trial.number] = step
        return None

    def _why_pruned(self, step: int) -> str:
        kind = self.ledger.campaign.policy.pruner.kind.value
        metric = self.ledger.campaign.objective.metric
        return f"the {kind} pruner judged its {metric} at that step worse than earlier trials'"

    def _reached_end(self, values: list[tuple[int, float]]) -> bool:
        """Whether a job's points reach the last step the campaign's completed trials reported."""
        end = campaign_end(self.ledger.trials())
        return end is not None and bool(values) and values[-1][0] >= end

    def _pruned_step(self, trial: TrialRecord, job: Job) -> int | None:
        """The step a job was asked to stop at for the pruner (by this runner, or, as the ledger
        records, by one before it); None when it was not."""
        if trial.number in self._pruning:
            return self._pruning[trial.number]
        return trial.prune_step if job.state is JobState.cancelled else None

    def _usage(self, job: Job | None) -> dict[str, Any]:
        """What a verdict records of the compute a job used: its slot time, and whether every slot
        it held was a physical GPU (its nodes are not virtual)."""
        if job is None:
            return {}
        nodes = slot_nodes(job)
        known = self._nodes(nodes)  # a node not known counts as slots, not GPUs
        return {"gpu_seconds": gpu_seconds(job), "real_gpus": bool(nodes) and all(
            n in known and not known[n].virtual for n in nodes)}

    def _finish(self, trial: TrialRecord, job: Job) -> TrialRecord:
        """The verdict on a trial whose job reached a final state."""
        number, used = trial.number, self._usage(job)
        values: list[tuple[int, float]] = []
        pruned_at = self._pruned_step(trial, job)
        if (job.state is not JobState.cancelled or pruned_at is not None) and trial.mlflow_run_id:
            values = self._read(trial, job, final=True)
            self._report(trial, values)
        if job.attempts:
            steps = [*self.ledger.trial(number).intermediate_values, *(step for step, _ in values)]
            nodes = self._nodes({a.node for a in job.attempts})
            self.ledger.record_provenance(number, provenance_of(job, self.client, steps, self.ledger.campaign, nodes))
        attempt = job.last_attempt
        tail = read_tail(attempt.log_path if attempt else None, max_bytes=EXCERPT_BYTES).text
        stopped = pruned_at is not None and job.state is JobState.cancelled
        ran_to_end = stopped and self._reached_end(values)  # the stop came after its last step: not a prune
        if stopped and not ran_to_end:
            record = self.ledger.prune(number, **used)
            if trial.mlflow_run_id:
                reason = job.state_reason or f"trial {number} pruned at step {pruned_at}"
                self.tracker.log(trial.mlflow_run_id, tags={PRUNED_AT_STEP_TAG: str(pruned_at), PRUNE_REASON_TAG: reason})
        elif job.state is JobState.succeeded or ran_to_end:
            if values:
                record = self.ledger.complete(number, self._running(values)[-1][1], **used)
                if record.value is not None and trial.mlflow_run_id:
                    self.tracker.log(trial.mlflow_run_id, tags={VALUE_TAG: repr(record.value)})
            else:
                metric = self.ledger.campaign.objective.metric
                excerpt = no_metric_excerpt(metric, self.reader.seen(number), job, tail)
                record = self.ledger.fail(number, TrialFailure.no_metric, log_excerpt=excerpt, **used)
        elif job.state is JobState.failed:
            failure = TrialFailure.user
            if attempt and attempt.outcome is AttemptOutcome.timed_out:
                failure = TrialFailure.timed_out
            elif attempt and attempt.failure_class is not None:
                failure = _FAILURE[attempt.failure_class]
            excerpt = failed_excerpt(job, tail)
            if failure is TrialFailure.resource and attempt and attempt.failure_rule == DISK_FULL_RULE:  # not its fault
                record = self.ledger.cancel(number, f"{DISK_FULL_CANCEL}: {excerpt}", rule=DISK_FULL_RULE, **used)
            else:
                rule = attempt.failure_rule if attempt else None
                record = self.ledger.fail(number, failure, log_excerpt=excerpt, rule=rule, **used)
        else:
            record = self.ledger.cancel(number, f"job {job.id} cancelled: {job.state_reason}", **used)
        crash_point("evaluate.ended")
        if job.state is JobState.cancelled and trial.mlflow_run_id:
            tag_run_with_job(self.tracker, trial.mlflow_run_id, job.id)  # reads tag the others
        self.records.close(trial, job, _RUN_STATUS.get(record.state, RunStatus.KILLED))
        self._tag_suspects()
        self._forget(number)
        return record

    def _nodes(self, names: set[str]) -> dict[str, Node]:
        """The compute nodes by name (virtual or not ...), read again when `names` holds one not seen yet."""
        if not names <= self._node_info.keys():
            try:
                self._node_info = {n.name: n for n in self.client.nodes()}
            except ComputeError:
                pass  # not known: its slots count as virtual
        return self._node_info

    def _tag_suspects(self) -> None:
        """Tag the runs of trials whose results are suspect (a trial can turn suspect when later
        trials set the median speed of its GPU model)."""
        trials = self.ledger.trials()
        by_number = {t.number: t for t in trials}
        for number, reason in suspect_reasons(trials, self.ledger.campaign.validity.min_speed_ratio).items():
            run_id = by_number[number].mlflow_run_id
            if run_id and self._suspect_tagged.get(number) != reason:
                self.tracker.log(run_id, tags={SUSPECT_TAG: reason})
                self._suspect_tagged[number] = reason

    def _flush(self, trial: TrialRecord, job: Job) -> None:
        """Log what a trial about to be stopped has printed so far, and tag its run with the job."""
        if trial.mlflow_run_id and job.attempts:
            self._read(trial, job, final=True)

    def _forget(self, number: int) -> None:
        self.reader.forget(number)
        self._pruning.pop(number, None)
        self._reported.pop(number, None)
        self._read_at.pop(number, None)

    def cancel_trial(self, trial: TrialRecord, reason: str) -> None:
        """End a proposed or running trial without a verdict and cancel its job."""
        job = self._job(trial.job_id)
        if job is not None:
            self._flush(trial, job)
        self.ledger.cancel(trial.number, reason, **self._usage(job))
        if job and not job.state.final:
            job = self.client.cancel(job.id, reason=reason)
        self.records.close(trial, job, RunStatus.KILLED)
        self._forget(trial.number)

    def reconcile(self, experiment_id: str) -> None:
        """Repair what a killed runner left half done: cancel jobs still going for trials that
        ended (pruned, cancelled), and finish the MLflow runs of ended trials still RUNNING
        (their last metrics and end status were queued when it died)."""
        trials = self.ledger.trials()
        for trial in trials:
            if trial.state is TrialState.running and trial.prune_step is not None and trial.job_id:
                self._pruning[trial.number] = trial.prune_step
                job = self._job(trial.job_id)
                if job and not job.state.final:  # the runner died between the ledger's record and the ask
                    self.client.cancel(job.id, reason=f"trial {trial.number} pruned at step {trial.prune_step}: "
                                                      f"{self._why_pruned(trial.prune_step)}")  # fmt: skip
        ended = [t for t in trials if t.state.final and t.job_id]
        if not ended:
            return
        tags = {CAMPAIGN_TAG: self.ledger.campaign.name}
        open_runs = set(self.tracker.find_runs(experiment_id, tags, status=RunStatus.RUNNING))
        for trial in ended:
            job = self._job(trial.job_id)
            if job and not job.state.final and trial.state in (TrialState.pruned, TrialState.cancelled):
                self.client.cancel(job.id, reason=f"trial {trial.number} is {trial.state.value}")
            if job and trial.mlflow_run_id in open_runs:
                self._flush(trial, job)
                self.records.close(trial, job, _RUN_STATUS.get(trial.state, RunStatus.KILLED))
                self._forget(trial.number)

    def _job(self, job_id: str | None) -> Job | None:
        if not job_id:
            return None
        try:
            return self.client.get(job_id)
        except ComputeError:
            return None
