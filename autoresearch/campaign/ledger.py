"""The trial ledger: every trial of a campaign lives in one Optuna study in RDB storage.

`$AUTORESEARCH_HOME/campaigns/<name>/optuna.db`, study name = campaign name, so samplers,
pruners and `optuna-dashboard sqlite:///.../optuna.db` all see every trial, however it
was proposed. Our metadata (job id, MLflow run id, rationale, failure class ...) are trial
user attributes; campaign-level facts (config, state, LLM spend, research notes) are study
user attributes.

Trial life: `admit` (proposed) -> `mark_launched` (running) -> `complete` | `prune` |
`fail` | `cancel`. Resume: after a crash, `unlaunched()` lists trials that were asked but
have no job yet (launch them again with the same `idempotency_key`), `running()` those
whose job was submitted but never ended.

One ledger object per process, used from one thread: the runner is the only writer. The
runner's ledger (`cache=True`) keeps trials and campaign facts in memory between reads and
updates them on its own writes; every other ledger reads the store each time.
"""

from __future__ import annotations

import fcntl
import math
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import optuna
import sqlalchemy
from optuna.trial import FrozenTrial
from optuna.trial import TrialState as OptunaState

from autoresearch.campaign.config import Campaign
from autoresearch.campaign.params import check_params
from autoresearch.campaign.paths import campaign_dir, campaigns_root
from autoresearch.campaign.records import CampaignState, Note, Proposal, TrialFailure, TrialRecord, TrialState

_DESCRIBE = ("rationale", "hypothesis", "expected_effect", "patch", "parent_trial", "rerun_of", "resume_of")


class LedgerError(Exception):
    """The ledger cannot do what was asked; the message says why and what to do."""


class Ledger:
    """The trials of one campaign, in its Optuna study."""

    def __init__(
        self, campaign: Campaign, storage: optuna.storages.BaseStorage, path: Path, *, cache: bool = False
    ) -> None:
        self.campaign = campaign
        self.storage = storage
        """The study's storage; a policy builds its own `optuna.Study` view on it."""
        self.path = path
        """The SQLite file."""
        self.study = optuna.load_study(
            study_name=campaign.name,
            storage=storage,
            sampler=optuna.samplers.RandomSampler(),
            pruner=optuna.pruners.NopPruner(),
        )
        """The ledger's own view of the study; it only asks trials whose parameters are fixed."""
        self._study_id = storage.get_study_id_from_name(campaign.name)
        self.cache = cache
        """Keep trials and study attributes in memory (only for the campaign's single writer: every
        write goes through this object, and trials a policy asks are picked up by `admit`)."""
        self._records: dict[int, TrialRecord] | None = None
        self._attrs: dict[str, Any] | None = None
        self._ids: dict[int, int] = {}

    @classmethod
    def open(cls, campaign: Campaign, home: str | os.PathLike[str] | None = None, *, cache: bool = False) -> Ledger:
        """Open (or create) the ledger of `campaign`, store its config, claim trials left queued.
        `cache`: the caller is the campaign's single writer (the runner); see `Ledger.cache`."""
        folder = campaign_dir(campaign.name, home)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "optuna.db"
        with _schema_lock(folder, exclusive=True):
            storage = _storage(path)
            study = optuna.create_study(
                storage=storage, study_name=campaign.name, direction=campaign.objective.direction, load_if_exists=True
            )
            if study.direction.name.lower() != campaign.objective.direction:
                raise LedgerError(
                    f"campaign {campaign.name!r} ({path}) was run with the opposite objective mode; "
                    f"the config now says mode: {campaign.objective.mode.value}. Restore the mode, or "
                    f"give the campaign a new name to start over."
                )
            study.set_user_attr("campaign", campaign.model_dump(mode="json"))
            if "started_at" not in study.user_attrs:
                study.set_user_attr("started_at", _now().isoformat())
        ledger = cls(campaign, storage, path, cache=cache)
        ledger._claim_waiting()
        ledger._cancel_incomplete()
        return ledger

    @classmethod
    def load(cls, name: str, home: str | os.PathLike[str] | None = None) -> Ledger:
        """Open an existing campaign's ledger by name, with the config it last ran with."""
        path = campaign_dir(name, home) / "optuna.db"
        if not path.is_file():
            root = campaigns_root(home)
            known = sorted(p.parent.name for p in root.glob("*/optuna.db"))
            raise LedgerError(
                f"no campaign named {name!r} in {root}; known campaigns: {', '.join(known) or 'none'}. "
                f"Start one with `autoresearch run campaign.yaml` (or set AUTORESEARCH_HOME)."
            )
        with _schema_lock(path.parent, exclusive=False):  # `open` may be creating it right now
            storage = _storage(path)
            attrs = optuna.load_study(study_name=name, storage=storage).user_attrs
        campaign = Campaign.model_validate(attrs["campaign"], context={"check_paths": False})
        return cls(campaign, storage, path)

    @property
    def storage_url(self) -> str:
        """`sqlite:///...` for optuna-dashboard."""
        return f"sqlite:///{self.path}"

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

    def checkpoint_dir(self, trial: TrialRecord) -> Path:
        """AR_CHECKPOINT_DIR of `trial`: `<campaign dir>/checkpoints/<identity>/trial-N`, where N is
        the trial it continues (`resume_of`, followed back) or else its own number."""
        return self.path.parent / "checkpoints" / self.identity / f"trial-{self.origin(trial).number}"

    def trial_dir(self, number: int) -> Path:
        """AR_TRIAL_DIR and `{trial_dir}` of trial `number`: `<campaign dir>/trials/<identity>/trial-N`,
        its own (a trial resuming another gets a fresh one; its checkpoint dir is the shared one)."""
        return self.path.parent / "trials" / self.identity / f"trial-{number}"

    def origin(self, trial: TrialRecord) -> TrialRecord:
        """The trial whose run `trial` continues: `resume_of` followed back to a trial that started
        from scratch (`trial` itself when it resumes nothing). Its seed and checkpoint are `trial`'s."""
        seen = {trial.number}
        while trial.resume_of is not None and trial.resume_of not in seen:
            seen.add(trial.resume_of)
            trial = self.trial(trial.resume_of)
        return trial

    # --- entering trials -------------------------------------------------------------

    def admit(self, proposal: Proposal) -> Proposal:
        """Put a proposal in the ledger (or describe one a policy already asked); returns it numbered.

        A proposal without a trial number (an LLM's, a chat `/try`) is enqueued with its fixed
        parameters and asked at once, so the study holds every trial.
        """
        story = {key: getattr(proposal, key) for key in _DESCRIBE if getattr(proposal, key) not in (None, "")}
        if proposal.trial_number is None:
            params = check_params(self.campaign.search_space, proposal.params)
            marker = uuid.uuid4().hex
            self.study.enqueue_trial(params, user_attrs={"proposal_id": marker, **story})
            claimed = self._claim_waiting()
            number = next(t.number for t in claimed if t.user_attrs.get("proposal_id") == marker)
        else:
            number = proposal.trial_number
            record = self.trial(number)
            if record.state is not TrialState.proposed:
                raise LedgerError(
                    f"trial {number} of {self.campaign.name!r} is {record.state.value}, not proposed"
                )
            trial_id = self._trial_id(number)
            for key, value in story.items():
                self.storage.set_trial_user_attr(trial_id, key, value)
            self._amend(number, **story)
        return proposal.model_copy(update={"trial_number": number, "params": self.trial(number).params})

    def _claim_waiting(self) -> list[FrozenTrial]:
        """Ask every queued (WAITING) trial so it becomes a proposed trial with its fixed params.

        Queued trials exist only between `enqueue_trial` and `ask` (or after a crash there).
        """
        claimed = []
        while self.study.get_trials(deepcopy=False, states=(OptunaState.WAITING,)):
            trial = self.study.ask()
            for name, spec in self.campaign.search_space.items():
                spec.suggest(trial, name)  # the fixed value; random only for a parameter added since
            claimed.append(self.storage.get_trial(self._trial_id(trial.number)))
            self._refresh(trial.number)
        return claimed

    def _cancel_incomplete(self) -> None:
        """Cancel unlaunched trials that lack a parameter: a proposal cut off by a crash while its
        parameters were drawn, or one made before the search space gained a parameter."""
        for t in self.unlaunched():
            missing = [name for name in self.campaign.search_space if name not in t.params]
            if missing:
                reason = f"not launched: proposed without {', '.join(missing)} (interrupted, or the space changed)"
                self.cancel(t.number, reason)

    # --- reading -----------------------------------------------------------------------

    def trials(self) -> list[TrialRecord]:
        """Every trial, by number."""
        if self._records is not None:
            return sorted(self._records.values(), key=lambda t: t.number)
        records = {}
        for t in self.study.get_trials(deepcopy=False):
            self._ids[t.number] = t._trial_id
            records[t.number] = _record(t)
        if self.cache:
            self._records = records
        return list(records.values())

    def trial(self, number: int) -> TrialRecord:
        if self._records is not None and number in self._records:
            return self._records[number]
        return self._refresh(number)

    def _refresh(self, number: int) -> TrialRecord:
        """Read trial `number` from the store (and keep it, with `cache`)."""
        record = _record(self.frozen_trial(number))
        if self._records is not None:
            self._records[number] = record
        return record

    def frozen_trial(self, number: int) -> FrozenTrial:
        """Optuna's record of trial `number` (what samplers and pruners read)."""
        return self.storage.get_trial(self._trial_id(number))

    def unlaunched(self) -> list[TrialRecord]:
        """Trials in the ledger without a job: launch them (again) with their idempotency key."""
        return [t for t in self.trials() if t.state is TrialState.proposed]

    def running(self) -> list[TrialRecord]:
        """Trials whose job was submitted and that have not ended."""
        return [t for t in self.trials() if t.state is TrialState.running]

    def best(self) -> TrialRecord | None:
        """The best complete trial (the earliest among equals), or None."""
        best: TrialRecord | None = None
        objective = self.campaign.objective
        for t in self.trials():
            if t.state is TrialState.complete and (best is None or objective.better(t.value, best.value)):
                best = t
        return best

    # --- a trial's life ----------------------------------------------------------------

    def mark_launched(self, number: int, job_id: str) -> None:
        """Record the job that runs trial `number` (the trial is then running)."""
        trial_id = self._trial_id(number)
        self.storage.set_trial_user_attr(trial_id, "job_id", job_id)
        started = _now().isoformat()
        self.storage.set_trial_user_attr(trial_id, "started_at", started)
        self._amend(number, state=TrialState.running, job_id=job_id, started_at=datetime.fromisoformat(started))

    def set_mlflow_run(self, number: int, run_id: str) -> None:
        self.storage.set_trial_user_attr(self._trial_id(number), "mlflow_run_id", run_id)
        self._amend(number, mlflow_run_id=run_id)

    def _amend(self, number: int, **fields: Any) -> None:
        """With `cache`: apply a write this ledger just made to the kept record (as a read would)."""
        if self._records is not None and number in self._records:
            self._records[number] = self._records[number].model_copy(update=fields)

    def report(self, number: int, step: int, value: float) -> None:
        """Record an intermediate objective value (what pruners judge). Repeated steps are ignored."""
        current = self.trial(number) if self._records is not None else self._refresh(number)
        if not current.state.final and step not in current.intermediate_values:
            self.storage.set_trial_intermediate_value(self._trial_id(number), step, float(value))
            self._amend(number, intermediate_values={**current.intermediate_values, step: float(value)})

    def complete(self, number: int, value: float, *, gpu_seconds: float = 0.0) -> TrialRecord:
        """End trial `number` with its objective value; a NaN or infinite value fails it instead."""
        if not math.isfinite(value):
            excerpt = f"objective was {value}"
            return self.fail(number, TrialFailure.non_finite, log_excerpt=excerpt, gpu_seconds=gpu_seconds)
        return self._end(number, OptunaState.COMPLETE, value, {"gpu_seconds": gpu_seconds})

    def prune(self, number: int, *, gpu_seconds: float = 0.0) -> TrialRecord:
        """End trial `number` as pruned (its value becomes the last intermediate value)."""
        return self._end(number, OptunaState.PRUNED, None, {"gpu_seconds": gpu_seconds})

    def fail(
        self, number: int, failure: TrialFailure, *, log_excerpt: str = "", gpu_seconds: float = 0.0
    ) -> TrialRecord:
        """End trial `number` as failed, keeping why and the end of its log."""
        attrs = {"failure_class": failure.value, "log_excerpt": log_excerpt, "gpu_seconds": gpu_seconds}
        return self._end(number, OptunaState.FAIL, None, attrs)

    def cancel(self, number: int, reason: str = "", *, gpu_seconds: float = 0.0) -> TrialRecord:
        """End trial `number` without a verdict (campaign stopped, person cancelled)."""
        attrs = {"cancelled": True, "log_excerpt": reason, "gpu_seconds": gpu_seconds}
        return self._end(number, OptunaState.FAIL, None, attrs)

    def _end(self, number: int, state: OptunaState, value: float | None, attrs: dict[str, Any]) -> TrialRecord:
        """Idempotent: a trial that already ended keeps its first verdict."""
        trial_id = self._trial_id(number)
        current = self.trial(number) if self._records is not None else self._refresh(number)
        if current.state.final:
            return current
        for key, attr in attrs.items():
            self.storage.set_trial_user_attr(trial_id, key, attr)
        if state is OptunaState.PRUNED and current.intermediate_values:  # as `Study.tell` does
            last = current.intermediate_values[max(current.intermediate_values)]
            value = None if math.isnan(last) else last
        # `Study.tell` would read the trial twice more; what it checks is in `current` already
        self.storage.set_trial_state_values(trial_id, state, None if value is None else [float(value)])
        return self._refresh(number)

    def _trial_id(self, number: int) -> int:
        if number not in self._ids:  # a trial's id never changes
            try:
                self._ids[number] = self.storage.get_trial_id_from_study_id_trial_number(self._study_id, number)
            except KeyError:
                raise LedgerError(f"campaign {self.campaign.name!r} has no trial {number}") from None
        return self._ids[number]

    # --- campaign-level facts ----------------------------------------------------------

    @property
    def started_at(self) -> datetime:
        """When the campaign first opened its ledger."""
        return datetime.fromisoformat(self._study_attrs()["started_at"])

    @property
    def state(self) -> CampaignState:
        return CampaignState(self._study_attrs().get("state", CampaignState.running.value))

    @property
    def state_reason(self) -> str:
        return self._study_attrs().get("state_reason", "")

    @property
    def ended_at(self) -> datetime | None:
        """When the campaign reached a final state, if it did."""
        raw = self._study_attrs().get("ended_at")
        return datetime.fromisoformat(raw) if raw else None

    def set_state(self, state: CampaignState, reason: str = "") -> None:
        self._set_attr("state", state.value)
        self._set_attr("state_reason", reason)
        final = state in (CampaignState.completed, CampaignState.stopped, CampaignState.failed)
        self._set_attr("ended_at", _now().isoformat() if final else None)

    @property
    def llm_usd(self) -> float:
        """Dollars spent on LLM calls so far."""
        return float(self._study_attrs().get("llm_usd", 0.0))

    def add_llm_cost(self, usd: float) -> float:
        total = self.llm_usd + usd
        self._set_attr("llm_usd", total)
        return total

    @property
    def mlflow_experiment_id(self) -> str | None:
        return self._study_attrs().get("mlflow_experiment_id")

    def set_mlflow_experiment(self, experiment_id: str) -> None:
        self._set_attr("mlflow_experiment_id", experiment_id)

    def notes(self) -> list[Note]:
        """The research log, oldest first."""
        return [Note.model_validate(n) for n in self._study_attrs().get("notes", [])]

    def append_note(self, text: str, author: str = "policy") -> Note:
        note = Note(at=_now(), text=text, author=author)
        self._set_attr("notes", [*self._study_attrs().get("notes", []), note.model_dump(mode="json")])
        return note

    def _study_attrs(self) -> dict[str, Any]:
        """The study's user attributes (the campaign-level facts above), kept in memory with `cache`."""
        if self._attrs is not None:
            return self._attrs
        attrs = self.study.user_attrs
        if self.cache:
            self._attrs = attrs
        return attrs

    def _set_attr(self, key: str, value: Any) -> None:
        self.study.set_user_attr(key, value)
        if self._attrs is not None:
            self._attrs[key] = value


@contextmanager
def _schema_lock(folder: Path, *, exclusive: bool) -> Iterator[None]:
    """Creating a ledger (schema, study, config) holds this lock exclusively and loading one holds
    it shared, so a reader (`autoresearch status` in a campaign's first second) never meets a
    half-made store nor races to create the schema ("table studies already exists")."""
    with open(folder / "ledger.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield


def _storage(path: Path) -> optuna.storages.RDBStorage:
    """RDB storage on SQLite in WAL mode: readers (status, dashboard) never block the runner,
    and a commit survives the process being killed."""
    storage = optuna.storages.RDBStorage(f"sqlite:///{path}", engine_kwargs={"connect_args": {"timeout": 30}})
    sqlalchemy.event.listen(storage.engine, "connect", _sqlite_pragmas)
    storage.engine.dispose()  # connections made before the listener reopen with the pragmas
    return storage


def _sqlite_pragmas(connection: Any, _record: Any) -> None:
    cursor = connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _aware(value: datetime | None) -> datetime | None:
    return value.astimezone() if value is not None else None


def _record(t: FrozenTrial) -> TrialRecord:
    attrs = t.user_attrs
    state = {
        OptunaState.WAITING: TrialState.proposed,
        OptunaState.RUNNING: TrialState.running if attrs.get("job_id") else TrialState.proposed,
        OptunaState.COMPLETE: TrialState.complete,
        OptunaState.PRUNED: TrialState.pruned,
        OptunaState.FAIL: TrialState.cancelled if attrs.get("cancelled") else TrialState.failed,
    }[t.state]
    started = attrs.get("started_at")
    params = t.system_attrs.get("fixed_params", {}) if t.state is OptunaState.WAITING else t.params
    return TrialRecord(
        number=t.number,
        state=state,
        params=dict(params),
        value=t.value if t.state in (OptunaState.COMPLETE, OptunaState.PRUNED) else None,
        intermediate_values=dict(t.intermediate_values),
        job_id=attrs.get("job_id"),
        mlflow_run_id=attrs.get("mlflow_run_id"),
        failure_class=attrs.get("failure_class"),
        log_excerpt=attrs.get("log_excerpt") or None,
        patch=attrs.get("patch"),
        parent_trial=attrs.get("parent_trial"),
        rerun_of=attrs.get("rerun_of"),
        resume_of=attrs.get("resume_of"),
        rationale=attrs.get("rationale", ""),
        hypothesis=attrs.get("hypothesis", ""),
        expected_effect=attrs.get("expected_effect", ""),
        created_at=_aware(t.datetime_start),
        started_at=datetime.fromisoformat(started) if started else None,
        ended_at=_aware(t.datetime_complete),
        gpu_seconds=float(attrs.get("gpu_seconds", 0.0)),
    )
