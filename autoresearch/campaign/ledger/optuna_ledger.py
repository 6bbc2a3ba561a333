"""`Ledger`: the `TrialLedger` whose trials live in one Optuna study in RDB storage.

`$AUTORESEARCH_HOME/campaigns/<name>/optuna.db`, study name = campaign name, so samplers,
pruners and `optuna-dashboard sqlite:///.../optuna.db` all see every trial, however it
was proposed. Our metadata (job id, MLflow run id, rationale, failure class ...) are trial
user attributes; the config and the `CampaignFacts` are study user attributes.

`Ledger.open` makes the campaign's writer (the runner, holding the campaign lock; `cache=True`
keeps trials and facts in memory, and the study's trials in a `MirroredStorage`), `Ledger.load` a reader. After a crash, `open` asks the trials
left queued (WAITING) and cancels proposed ones that lack a parameter.
"""

from __future__ import annotations

import math
import os
import uuid
import warnings
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import FrozenTrial
from optuna.trial import TrialState as OptunaState

from autoresearch.campaign.config import Campaign
from autoresearch.campaign.errors import LedgerError
from autoresearch.campaign.ledger._base import TrialLedger
from autoresearch.campaign.ledger._integrity import (
    check_not_lost,
    check_same_study,
    load_attrs,
    no_campaign,
    sqlite_errors,
    stamp_config,
    stored_config,
)
from autoresearch.campaign.ledger._optuna_internals import internals_usable
from autoresearch.campaign.ledger._mirror import MirroredStorage, flush, write_study_attrs, write_trial
from autoresearch.campaign.ledger._optuna_store import (
    CONFIG_ATTR,
    fact_attrs,
    facts_from_attrs,
    half_drawn,
    schema_lock,
    sqlite_storage,
    storage_url,
    trial_record,
)
from autoresearch.campaign.ledger.facts import CampaignFacts
from autoresearch.campaign.params import check_params
from autoresearch.campaign.paths import CampaignPaths
from autoresearch.campaign.records import Proposal, TrialRecord
from autoresearch.campaign.states import TrialFailure, TrialState
from autoresearch.campaign.validity import Provenance

_DESCRIBE = ("rationale", "hypothesis", "expected_effect", "patch", "parent_trial", "confirms", "resume_of",
             "suspect_rerun_of")


class Ledger(TrialLedger):
    """The trials of one campaign, in its Optuna study (a `TrialLedger` and `OptunaBacked`)."""

    def __init__(
        self,
        campaign: Campaign,
        storage: optuna.storages.BaseStorage,
        path: Path,
        *,
        cache: bool = False,
        writable: bool = True,
    ) -> None:
        self._campaign = campaign
        self._storage = storage
        self.path = path
        """The SQLite file."""
        self._study = self.study_view()
        """The ledger's own view of the study; it only asks trials whose parameters are fixed."""
        self._study_id = storage.get_study_id_from_name(campaign.name)
        self.cache = cache
        """Keep trials and facts in memory (only for the campaign's single writer: every write goes
        through this object, and trials a policy asks are picked up by `admit`)."""
        self.writable = writable
        """False for a reader (`Ledger.load`): its write methods raise LedgerError."""
        self.new = False
        """`open` started the campaign (stamped its `started_at`): no runner worked on it before, so
        nothing in MLflow or compute can be left from one."""
        self._records: dict[int, TrialRecord] | None = None
        self._facts: CampaignFacts | None = None
        self._ids: dict[int, int] = {}

    @classmethod
    def open(cls, campaign: Campaign, home: str | os.PathLike[str] | None = None, *, cache: bool = False) -> Ledger:
        """Open (or create) the ledger of `campaign` as its writer, store its config, claim trials
        left queued. `cache`: the caller is the campaign's single writer (the runner); see `cache`."""
        paths = CampaignPaths.of(campaign.name, home)
        folder = paths.root
        folder.mkdir(parents=True, exist_ok=True)
        path = paths.ledger_db
        with schema_lock(folder, exclusive=True):
            check_not_lost(paths, campaign.name)
            storage = sqlite_storage(path)
            with sqlite_errors(path):
                study = optuna.create_study(
                    storage=storage, study_name=campaign.name, direction=campaign.objective.direction,
                    load_if_exists=True,
                )  # fmt: skip
            if study.direction.name.lower() != campaign.objective.direction:
                raise LedgerError(
                    f"campaign {campaign.name!r} ({path}) was run with the opposite objective mode; "
                    f"the config now says mode: {campaign.objective.mode.value}. Restore the mode, or "
                    f"give the campaign a new name to start over."
                )
            config = campaign.model_dump(mode="json")
            study.set_user_attr(CONFIG_ATTR, config)
            stamp_config(config, paths)
            if study.metric_names != [campaign.objective.metric]:  # optuna-dashboard shows it, not "Objective 0"
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                    study.set_metric_names([campaign.objective.metric])
            new = "started_at" not in study.user_attrs
            if new:
                study.set_user_attr("started_at", datetime.now(UTC).isoformat())
            check_same_study(paths, campaign.name, study.user_attrs["started_at"])
        mirrored = cache and internals_usable()  # the mirror writes Optuna's tables itself
        ledger = cls(campaign, MirroredStorage(storage) if mirrored else storage, path, cache=cache)
        ledger.new = new
        ledger._claim_waiting()
        ledger._cancel_incomplete()
        return ledger

    @classmethod
    def load(cls, name: str, home: str | os.PathLike[str] | None = None) -> Ledger:
        """A reader of an existing campaign's ledger, by name, with the config it last ran with."""
        path = CampaignPaths.of(name, home).ledger_db
        if not path.is_file():
            raise no_campaign(name, home)
        with schema_lock(path.parent, exclusive=False), sqlite_errors(path):  # `open` may be creating it now
            check_not_lost(CampaignPaths(path.parent), name)  # a reader must not recreate a lost schema either
            storage = sqlite_storage(path)
            attrs = load_attrs(name, storage, path)
        return cls(stored_config(attrs[CONFIG_ATTR], name, path), storage, path, writable=False)

    @property
    def campaign(self) -> Campaign:
        return self._campaign

    @property
    def folder(self) -> Path:
        return self.path.parent

    # --- OptunaBacked ------------------------------------------------------------------

    @property
    def storage_url(self) -> str:
        """`sqlite:///...` for optuna-dashboard."""
        return storage_url(self.path)

    def study_view(
        self, *, sampler: optuna.samplers.BaseSampler | None = None, pruner: optuna.pruners.BasePruner | None = None
    ) -> optuna.Study:
        return optuna.load_study(
            study_name=self._campaign.name,
            storage=self._storage,
            sampler=sampler or optuna.samplers.RandomSampler(),
            pruner=pruner or optuna.pruners.NopPruner(),
        )

    def frozen_trial(self, number: int) -> FrozenTrial:
        return self._storage.get_trial(self._trial_id(number))

    # --- entering trials -------------------------------------------------------------

    def admit(self, proposal: Proposal) -> Proposal:
        """A proposal without a trial number (an LLM's, a chat `/try`) is enqueued with its fixed
        parameters and asked at once, so the study holds every trial."""
        self._check_writable("admit a trial")
        story = {key: getattr(proposal, key) for key in _DESCRIBE if getattr(proposal, key) not in (None, "")}
        if proposal.trial_number is None:
            params = check_params(self._campaign.search_space, proposal.params)
            marker = uuid.uuid4().hex
            self._study.enqueue_trial(params, user_attrs={"proposal_id": marker, **story})
            claimed = self._claim_waiting()
            number = next(t.number for t in claimed if t.user_attrs.get("proposal_id") == marker)
        else:
            number = proposal.trial_number
            record = self.trial(number)
            if record.state is not TrialState.proposed:
                raise LedgerError(f"trial {number} of {self._campaign.name!r} is {record.state.value}, not proposed")
            write_trial(self._storage, self._trial_id(number), story)
            self._amend(number, **story)
        return proposal.model_copy(update={"trial_number": number, "params": self.trial(number).params})

    def _claim_waiting(self) -> list[FrozenTrial]:
        """Ask every queued (WAITING) trial so it becomes a proposed trial with its fixed params.

        Queued trials exist only between `enqueue_trial` and `ask` (or after a crash there).
        """
        claimed = []
        while self._study.get_trials(deepcopy=False, states=(OptunaState.WAITING,)):
            trial = self._study.ask()
            for name, spec in self._campaign.search_space.items():
                spec.suggest(trial, name)  # the fixed value; random only for a parameter added since
            claimed.append(self._storage.get_trial(self._trial_id(trial.number)))
            self._refresh(trial.number)
        flush(self._storage)  # an admitted trial's parameters are committed before `admit` returns
        return claimed

    def _cancel_incomplete(self) -> None:
        """Cancel unlaunched trials that lack a parameter: a proposal cut off by a crash while its
        parameters were drawn, or one made before the search space gained a parameter."""
        for t in self.unlaunched():
            missing = [name for name in self._campaign.search_space if name not in t.params]
            if missing:
                reason = f"not launched: proposed without {', '.join(missing)} (interrupted, or the space changed)"
                self.cancel(t.number, reason)

    # --- reading -----------------------------------------------------------------------

    def trials(self) -> list[TrialRecord]:
        if self._records is not None:
            return sorted(self._records.values(), key=lambda t: t.number)
        records = {}
        space = self._campaign.search_space
        for t in self._study.get_trials(deepcopy=False):
            self._ids[t.number] = t._trial_id
            record = trial_record(t)
            if not self.writable and half_drawn(record, space):
                continue  # a reader came between the writer's `ask` and its parameters' commit
            records[t.number] = record
        if self.cache:
            self._records = records
        return list(records.values())

    def trial(self, number: int) -> TrialRecord:
        if self._records is not None and number in self._records:
            return self._records[number]
        return self._refresh(number)

    def _refresh(self, number: int) -> TrialRecord:
        """Read trial `number` from the store (and keep it, with `cache`)."""
        record = trial_record(self.frozen_trial(number))
        if self._records is not None:
            self._records[number] = record
        return record

    # --- a trial's life ----------------------------------------------------------------

    def mark_launched(self, number: int, job_id: str) -> None:
        self._check_writable("launch a trial")
        started = datetime.now(UTC).isoformat()
        write_trial(self._storage, self._trial_id(number), {"job_id": job_id, "started_at": started})
        self._amend(number, state=TrialState.running, job_id=job_id, started_at=datetime.fromisoformat(started))

    def set_mlflow_run(self, number: int, run_id: str) -> None:
        self._check_writable("record a trial's MLflow run")
        self._storage.set_trial_user_attr(self._trial_id(number), "mlflow_run_id", run_id)
        self._amend(number, mlflow_run_id=run_id)

    def record_provenance(self, number: int, provenance: Provenance) -> None:
        """Record where trial `number`'s attempts ran and how fast (before its verdict)."""
        self._check_writable("record a trial's provenance")
        write_trial(self._storage, self._trial_id(number), {"provenance": provenance.model_dump(mode="json")})
        self._amend(number, provenance=provenance)

    def _amend(self, number: int, **fields: Any) -> None:
        """With `cache`: apply a write this ledger just made to the kept record (as a read would)."""
        if self._records is not None and number in self._records:
            self._records[number] = self._records[number].model_copy(update=fields)

    def report_steps(self, number: int, values: Mapping[int, float]) -> None:
        self._check_writable("report a value")
        current = self.trial(number)
        fresh = {step: float(value) for step, value in sorted(values.items()) if step not in current.intermediate_values}
        if fresh and not current.state.final:
            write_trial(self._storage, self._trial_id(number), {}, steps=list(fresh.items()))
            self._amend(number, intermediate_values={**current.intermediate_values, **fresh})

    def complete(self, number: int, value: float, *, gpu_seconds: float = 0.0, real_gpus: bool = False) -> TrialRecord:
        if not math.isfinite(value):
            excerpt = f"objective was {value}"
            return self.fail(number, TrialFailure.non_finite, log_excerpt=excerpt, gpu_seconds=gpu_seconds,
                             real_gpus=real_gpus)
        return self._end(number, OptunaState.COMPLETE, value, _usage(gpu_seconds, real_gpus))

    def prune(self, number: int, *, gpu_seconds: float = 0.0, real_gpus: bool = False) -> TrialRecord:
        return self._end(number, OptunaState.PRUNED, None, _usage(gpu_seconds, real_gpus))

    def fail(
        self, number: int, failure: TrialFailure, *, log_excerpt: str = "", gpu_seconds: float = 0.0,
        real_gpus: bool = False,
        rule: str | None = None,
    ) -> TrialRecord:
        attrs = {"failure_class": failure.value, "log_excerpt": log_excerpt, **_usage(gpu_seconds, real_gpus),
                 **({"failure_rule": rule} if rule else {})}  # fmt: skip
        return self._end(number, OptunaState.FAIL, None, attrs)

    def mark_pruning(self, number: int, step: int) -> None:
        self._check_writable("record a prune")
        write_trial(self._storage, self._trial_id(number), {"prune_step": step})
        self._amend(number, prune_step=step)

    def cancel(
        self, number: int, reason: str = "", *, gpu_seconds: float = 0.0, real_gpus: bool = False,
        rule: str | None = None,
    ) -> TrialRecord:
        attrs = {"cancelled": True, "log_excerpt": reason, **_usage(gpu_seconds, real_gpus),
                 **({"failure_rule": rule} if rule else {})}  # fmt: skip
        return self._end(number, OptunaState.FAIL, None, attrs)

    def _end(self, number: int, state: OptunaState, value: float | None, attrs: dict[str, Any]) -> TrialRecord:
        """Idempotent: a trial that already ended keeps its first verdict."""
        self._check_writable("end a trial")
        trial_id = self._trial_id(number)
        current = self.trial(number)
        if current.state.final:
            return current
        if state is OptunaState.PRUNED and current.intermediate_values:  # as `Study.tell` does
            last = current.intermediate_values[max(current.intermediate_values)]
            value = None if math.isnan(last) else last
        # `Study.tell` would read the trial twice more; what it checks is in `current` already.
        # Attributes and verdict in one commit: a crash leaves the trial running or ended, never half
        write_trial(self._storage, trial_id, attrs, state, None if value is None else [float(value)])
        return self._refresh(number)

    def _trial_id(self, number: int) -> int:
        if number not in self._ids:  # a trial's id never changes
            try:
                self._ids[number] = self._storage.get_trial_id_from_study_id_trial_number(self._study_id, number)
            except KeyError:
                raise LedgerError(f"campaign {self._campaign.name!r} has no trial {number}") from None
        return self._ids[number]

    # --- the campaign ------------------------------------------------------------------

    def set_campaign(self, campaign: Campaign) -> None:
        self._check_writable("change the config")
        config = campaign.model_dump(mode="json")
        self._study.set_user_attr(CONFIG_ATTR, config)
        stamp_config(config, CampaignPaths(self.folder))
        self._campaign = campaign

    def facts(self) -> CampaignFacts:
        if self._facts is not None:
            return self._facts
        facts = facts_from_attrs(self._study.user_attrs)
        if self.cache:
            self._facts = facts
        return facts

    def update_facts(self, **changes: Any) -> CampaignFacts:
        self._check_writable("change the campaign's facts")
        facts = CampaignFacts.model_validate({**dict(self.facts()), **changes})
        # one commit: no reader sees a new state without its reason
        write_study_attrs(self._storage, self._study_id, fact_attrs(facts, set(changes)))
        if self.cache:
            self._facts = facts
        return facts

    def _check_writable(self, what: str) -> None:
        if not self.writable:
            raise LedgerError(
                f"cannot {what} in campaign {self._campaign.name!r}: this ledger is a reader (Ledger.load); "
                f"only the runner holding the campaign's lock writes. Send a steering command instead "
                f"(`autoresearch chat {self._campaign.name}`)."
            )


def _usage(gpu_seconds: float, real_gpus: bool) -> dict[str, Any]:
    """The user attributes of a verdict that say what compute it used (`real_gpus` only when true:
    a ledger written before it existed reads as not known to be real GPUs)."""
    return {"gpu_seconds": gpu_seconds, **({"real_gpus": True} if real_gpus else {})}
