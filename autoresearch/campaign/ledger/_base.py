"""The `TrialLedger` protocol: where a campaign's trials and campaign-level facts live.

Everything else reads and writes a campaign's trials through this seam: the runner, the
policies, status, the report, chat and nightly. Nothing reaches into the store behind it.

Rules every ledger keeps:

- **One writer.** The runner that holds the campaign's lock (`CampaignLock`) opens the one
  writable ledger of a campaign; every other ledger of that campaign (status, chat, the report,
  nightly, another process) is a reader, and a reader's write methods raise `LedgerError`. A
  person changes a running campaign by a steering command, which the runner applies.
- **A trial's life.** `admit` (proposed) -> `mark_launched` (running) -> one verdict: `complete`,
  `prune`, `fail` or `cancel`. The first verdict wins: a later one returns the trial as it
  ended, unchanged. `report_steps` records intermediate values once per step, and only while the
  trial has not ended. A complete trial always has a finite value (`complete` with NaN or
  infinity fails the trial as `non_finite`); a pruned one keeps its last intermediate value.
- **Numbers.** `admit` numbers a proposal without a number (0, 1, 2 ... in the order admitted);
  a proposal that carries one (a policy asked that trial itself, see `OptunaBacked`) must name a
  trial that is still proposed. Parameters outside the search space are refused (ValueError)
  and enter nothing.
- **Resume.** A ledger reopened after a crash holds the same trials, in the same states, with
  the same idempotency keys: `unlaunched()` are launched again with their key, `running()` are
  watched again. Nothing written before the crash is lost; nothing is written twice.
- **Cache.** A reader reads the store on every call, so it sees the writer's last commit. The
  writer may keep trials and facts in memory (`cache=True`): it can trust them because every
  write goes through it; a trial a policy asked through a study view enters the cache when it
  is admitted. Cached and fresh reads agree at every point between two calls.

The methods marked *abstract* below are what an implementation writes; the rest are written
once here on top of them. A ledger is used from one thread.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from datetime import datetime, UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from autoresearch.campaign.config import Campaign
from autoresearch.campaign.paths import CampaignPaths
from autoresearch.campaign.ledger.facts import FINAL_STATES, CampaignFacts
from autoresearch.campaign.ranking import declared_best
from autoresearch.campaign.records import Note, Proposal, TrialRecord
from autoresearch.campaign.states import CampaignState, TrialFailure, TrialState
from autoresearch.campaign.validity import Provenance

if TYPE_CHECKING:
    import optuna
    from optuna.trial import FrozenTrial


class TrialLedger(Protocol):
    """The trials and facts of one campaign. See the module docstring for the rules."""

    @property
    @abstractmethod
    def campaign(self) -> Campaign:
        """The config the campaign runs with now (steering changes included)."""

    @property
    @abstractmethod
    def folder(self) -> Path:
        """The campaign's folder (checkpoints, workspaces ...)."""

    # --- abstract: trials ----------------------------------------------------------------

    @abstractmethod
    def trials(self) -> list[TrialRecord]:
        """Every trial, by number."""

    @abstractmethod
    def trial(self, number: int) -> TrialRecord:
        """Trial `number`; LedgerError when there is none."""

    @abstractmethod
    def admit(self, proposal: Proposal) -> Proposal:
        """Enter a proposal (or describe a proposed trial it numbers); return it numbered, with
        the parameters the ledger stored."""

    @abstractmethod
    def mark_launched(self, number: int, job_id: str) -> None:
        """Record the job that runs trial `number` (the trial is then running)."""

    @abstractmethod
    def set_mlflow_run(self, number: int, run_id: str) -> None:
        """Record trial `number`'s MLflow run."""

    @abstractmethod
    def record_provenance(self, number: int, provenance: Provenance) -> None:
        """Record where trial `number`'s attempts ran and how fast (call before its verdict)."""

    @abstractmethod
    def report_steps(self, number: int, values: Mapping[int, float]) -> None:
        """Record intermediate objective values (step -> value) in one write; a step already
        recorded is ignored."""

    @abstractmethod
    def complete(self, number: int, value: float, *, gpu_seconds: float = 0.0, real_gpus: bool = False) -> TrialRecord:
        """End trial `number` with its objective value (a non-finite one fails it). Every verdict
        keeps the slot time the job held (`gpu_seconds`) and whether those slots were physical GPUs."""

    @abstractmethod
    def prune(self, number: int, *, gpu_seconds: float = 0.0, real_gpus: bool = False) -> TrialRecord:
        """End trial `number` as pruned (its value: the last intermediate value)."""

    @abstractmethod
    def fail(
        self, number: int, failure: TrialFailure, *, log_excerpt: str = "", gpu_seconds: float = 0.0,
        real_gpus: bool = False,
        rule: str | None = None,
    ) -> TrialRecord:
        """End trial `number` as failed, keeping why (`rule`: compute's classifier rule, when its job
        failed) and the end of its log."""

    @abstractmethod
    def mark_pruning(self, number: int, step: int) -> None:
        """Record that the runner asked compute to stop running trial `number`'s job for the pruner,
        judged at `step` (`TrialRecord.prune_step`); call before asking. The trial stays running."""

    @abstractmethod
    def cancel(
        self, number: int, reason: str = "", *, gpu_seconds: float = 0.0, real_gpus: bool = False,
        rule: str | None = None,
    ) -> TrialRecord:
        """End trial `number` without a verdict (campaign stopped, person cancelled; `rule`: compute's
        classifier rule when what its job died of is not the trial's fault, a full disk)."""

    # --- abstract: the campaign ---------------------------------------------------------

    @abstractmethod
    def set_campaign(self, campaign: Campaign) -> None:
        """Store the config the campaign runs with from now on (a steering change)."""

    @abstractmethod
    def facts(self) -> CampaignFacts:
        """The campaign-level facts."""

    @abstractmethod
    def update_facts(self, **changes: Any) -> CampaignFacts:
        """Store new values of some `CampaignFacts` fields (validated); return the facts after."""

    # --- written once, on top of the above ---------------------------------------------------

    def report(self, number: int, step: int, value: float) -> None:
        """Record one intermediate objective value (`report_steps` of one step)."""
        self.report_steps(number, {step: value})

    def unlaunched(self) -> list[TrialRecord]:
        """Trials in the ledger without a job: launch them (again) with their idempotency key."""
        return [t for t in self.trials() if t.state is TrialState.proposed]

    def running(self) -> list[TrialRecord]:
        """Trials whose job was submitted and that have not ended."""
        return [t for t in self.trials() if t.state is TrialState.running]

    def best(self) -> TrialRecord | None:
        """The best complete trial that is not suspect (the earliest among equals), or None."""
        return declared_best(self.trials(), self.campaign)

    def idempotency_key(self, number: int) -> str:
        """The compute idempotency key of trial `number`: relaunching it never makes a second job.

        `<campaign>/<number>@<ledger start>`: the same across restarts of this campaign, and new
        for a campaign started over under the same name (its folder deleted), which must never
        be handed the old campaign's jobs.
        """
        return f"{self.campaign.name}/{number}@{self.identity}"

    @property
    def identity(self) -> str:
        """Tells this ledger from any earlier one under the campaign's name (its start, to the
        microsecond): it keys idempotency keys and trial folders, so a recreated ledger never
        hands a new trial an old trial's job or checkpoint."""
        return self.started_at.strftime("%Y%m%dT%H%M%S%f")

    def origin(self, trial: TrialRecord) -> TrialRecord:
        """The trial whose run `trial` continues: `resume_of` followed back to a trial that started
        from scratch (`trial` itself when it resumes nothing). Its seed and checkpoint are `trial`'s."""
        seen = {trial.number}
        while trial.resume_of is not None and trial.resume_of not in seen:
            seen.add(trial.resume_of)
            trial = self.trial(trial.resume_of)
        return trial

    def checkpoint_dir(self, trial: TrialRecord) -> Path:
        """AR_CHECKPOINT_DIR of `trial`: `<campaign dir>/checkpoints/<identity>/trial-N`, where N is
        the trial it continues (`resume_of`, followed back) or else its own number."""
        return CampaignPaths(self.folder).checkpoint_dir(self.identity, self.origin(trial).number)

    def trial_dir(self, number: int) -> Path:
        """AR_TRIAL_DIR and `{trial_dir}` of trial `number`: `<campaign dir>/trials/<identity>/trial-N`,
        its own (a trial resuming another gets a fresh one; its checkpoint dir is the shared one)."""
        return CampaignPaths(self.folder).trial_dir(self.identity, number)

    @property
    def started_at(self) -> datetime:
        """When the campaign first opened its ledger."""
        return self.facts().started_at

    @property
    def state(self) -> CampaignState:
        return self.facts().state

    @property
    def state_reason(self) -> str:
        return self.facts().state_reason

    @property
    def ended_at(self) -> datetime | None:
        """When the campaign reached a final state, if it did."""
        return self.facts().ended_at

    @property
    def llm_usd(self) -> float:
        """Dollars spent on LLM calls so far."""
        return self.facts().llm_usd

    @property
    def mlflow_experiment_id(self) -> str | None:
        return self.facts().mlflow_experiment_id

    def notes(self) -> list[Note]:
        """The research log, oldest first."""
        return list(self.facts().notes)

    def set_state(self, state: CampaignState, reason: str = "") -> None:
        """Move the campaign to `state`; a final state stamps `ended_at`, any other clears it."""
        ended = _now() if state in FINAL_STATES else None
        self.update_facts(state=state, state_reason=reason, ended_at=ended)

    def add_llm_cost(self, usd: float) -> float:
        """Add `usd` to the LLM spend; return the total."""
        return self.update_facts(llm_usd=self.llm_usd + usd).llm_usd

    def set_mlflow_experiment(self, experiment_id: str) -> None:
        self.update_facts(mlflow_experiment_id=experiment_id)

    def append_note(self, text: str, author: str = "policy") -> Note:
        """Add an entry to the research log."""
        note = Note(at=_now(), text=text, author=author)
        self.update_facts(notes=(*self.facts().notes, note))
        return note


@runtime_checkable
class OptunaBacked(Protocol):
    """An optional ability (checked with isinstance): the ledger's trials are one Optuna study,
    so Optuna samplers, pruners and importance evaluators work on it directly.

    A study view may only *ask* trials (a sampler's proposals, then passed to `admit` with their
    number); it never tells a value nor sets an attribute: verdicts and facts go through the
    ledger. A pruner may keep its own bookkeeping in a trial's system attributes.
    """

    @property
    def storage_url(self) -> str:
        """Where the study lives, for optuna-dashboard (`sqlite:///...`)."""
        ...

    def study_view(
        self, *, sampler: optuna.samplers.BaseSampler | None = None, pruner: optuna.pruners.BasePruner | None = None
    ) -> optuna.Study:
        """A new `optuna.Study` on the ledger's study with this sampler and pruner (default:
        random sampling, no pruning)."""
        ...

    def frozen_trial(self, number: int) -> FrozenTrial:
        """Optuna's record of trial `number` (what samplers and pruners read)."""
        ...


def _now() -> datetime:
    return datetime.now(UTC)
