"""Running a campaign: take the runner lock, open the ledger, build the policy, and drive the
graph on its SQLite checkpointer until the campaign ends.

Resuming is running again: the lock makes sure one runner works on a campaign; the ledger
says which trials exist and which have jobs; compute returns the same job for the same
idempotency key; the checkpointer restarts the node that was cut off.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import enum
import os
import sqlite3
import traceback
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import optuna
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ConfigDict

from autoresearch.campaign import (
    Campaign,
    CampaignPaths,
    CampaignState,
    CampaignStatus,
    Ledger,
    TrialRecord,
    PolicyKind,
    TrialFailure,
    active_seconds,
    campaign_status,
    config_changes,
    confirmed_early,
    refused_change,
    stop_reason,
)
from autoresearch.llm import LLMError
from autoresearch.policy import PolicyError
from autoresearch.runner.context import RunContext, RunnerSettings
from autoresearch.runner.display import Display, QuietDisplay
from autoresearch.runner.errors import RunnerError, disk_full
from autoresearch.runner.evaluate import Evaluator
from autoresearch.runner.gated import SteeredNodes
from autoresearch.runner.graph import RECURSION_LIMIT, build_graph
from autoresearch.runner.launch import Launcher
from autoresearch.runner.lock import CampaignLock
from autoresearch.runner.policies import PolicyFactory, build_policy, default_policy
from autoresearch.runner.wal_keeper import WalKeeper
from autoresearch.steering import ApprovalBook, Inbox, InboxError, SteeringError, Window, restore_steering, wait_for_answer
from compute import Client, ComputeError
from compute.errors import corrupt_cause
from compute.isolation import seal_process
from tracking import MlflowTracker, QueuedTracker, resolve_tracking


class Start(str, enum.Enum):
    """How a runner treats a campaign that stopped or paused before."""

    run = "run"
    """`autoresearch run CONFIG`: a stopped campaign stays stopped; a paused one waits for resume."""
    resume = "resume"
    """`autoresearch resume NAME`: a stopped, paused or failed campaign runs again."""


class RunOutcome(BaseModel):
    """How a runner ended."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    name: str
    state: CampaignState
    """The campaign's state when the runner returned."""
    reason: str
    """Why it is in that state."""
    already_ended: bool = False
    """The campaign had ended before this runner started; nothing was run."""
    policy: PolicyKind | None = None
    """The policy kind that ran (None when nothing ran)."""
    live_runner_pid: int | None = None
    """Set when another live runner holds the campaign and was asked (inbox) to resume instead."""
    status: CampaignStatus
    tracking_pending: int = 0
    """MLflow writes not applied when the runner returned (a detached writer applies them)."""
    tracking_writer_pid: int | None = None
    """The pid of that writer (None when nothing was pending)."""


def run_campaign(
    campaign: Campaign,
    *,
    home: str | os.PathLike[str] | None = None,
    start: Start = Start.run,
    display: Display | None = None,
    settings: RunnerSettings | None = None,
    environ: Mapping[str, str] | None = None,
    until: datetime | None = None,
    policy_factory: PolicyFactory | None = None,
) -> RunOutcome:
    """Run (or continue) `campaign` until it completes, stops, or fails. Raises `RunnerBusy`
    when another live runner holds the campaign, `RunnerError` when it cannot run.

    `until` (an aware datetime; nightly windows): no trial launches after it; the first replan
    after it pauses the campaign, stops running trials (queued again) and returns.
    `policy_factory` builds the policy of the resolved kind (default: `default_policy`)."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    display = display or QuietDisplay()
    factory = policy_factory or default_policy
    paths = CampaignPaths.of(campaign.name, home)
    seal_process()  # the runner holds the model's API key: jobs may not read it (compute/isolation.py)
    with CampaignLock(paths):
        earlier = Ledger.load(campaign.name, home) if paths.exists() and paths.ran_before() else None
        before = earlier.campaign if earlier is not None else None
        if earlier is not None:
            _check_change(earlier.campaign, campaign, earlier.trials())
        ledger = Ledger.open(campaign, home, cache=True)  # this runner is its single writer (lock held)
        try:
            restore_steering(ledger, paths)  # chat's changes (steering.json, budget/space messages) over the config
        except (SteeringError, InboxError) as exc:
            raise RunnerError(str(exc)) from None
        ended_state, ended_at = ledger.state, ledger.ended_at
        ended = _check_ended(ledger, start)
        if ended is not None:
            changes = [] if before is None else config_changes(before, ledger.campaign, ignore=("budget",), limit=5)
            if before is not None:
                ledger.set_campaign(before)  # nothing ran: this call's overrides (--max-trials) are not kept
            if changes:
                raise RunnerError(_ended_elsewise(ended, changes))
            return ended
        if before is not None:
            _say_changes(ledger, before, display)
        try:
            policy, kind = build_policy(ledger.campaign, ledger, environ=environ, factory=factory)
        except PolicyError as exc:
            raise RunnerError(str(exc)) from None
        client = Client(home, notice=display.event)  # a daemon it restarts that does not answer: said at once
        inbox, connection = _open_state(paths)
        if ended_at is not None:
            _expire_steering(inbox, ledger, ended_state, ended_at, display)
        settings = settings or RunnerSettings()
        tracker = _open_tracker(campaign, home, display, connection, paths.tracking_outbox)
        launcher: Launcher | None = None
        writer: int | None = None
        _begin_run(ledger)
        wal = WalKeeper([paths.graph_db, paths.tracking_outbox, paths.ledger_db])
        try:
            tracker.flush()  # an earlier runner's writes still pending: applied before anything reads MLflow
            launcher = Launcher(ledger, client, tracker, on_error=display.event)
            evaluator = Evaluator(ledger, client, policy, tracker, new_runs_after=launcher.known_at_start)
            evaluator.reconcile(launcher.experiment_id)
            ctx = RunContext(
                paths=paths, ledger=ledger, policy=policy, kind=kind, policy_factory=factory, environ=environ,
                client=client, tracker=tracker, launcher=launcher,
                evaluator=evaluator, inbox=inbox, book=ApprovalBook(paths), window=Window(until), display=display,
                settings=settings,
            )  # fmt: skip
            display.event(
                f"campaign {campaign.name}: {kind.value} policy, up to {campaign.budget.max_trials} trials, "
                f"{campaign.budget.max_parallel} in parallel; state in {paths.root}"
            )
            _drive(SteeredNodes(ctx), connection, campaign.name)
        except ComputeError as exc:
            _fail(ledger, exc)
            raise RunnerError(f"campaign {campaign.name!r} cannot launch its trials: {exc}") from None
        except RunnerError as exc:
            _fail(ledger, exc)
            raise
        except (PolicyError, LLMError) as exc:  # policy.fallback: fail, a refused API key ...: the campaign fails
            _fail(ledger, exc, what="the policy failed")
        except Exception as exc:
            if not disk_full(exc):
                log = _fail(ledger, exc, paths=paths)
                raise RunnerError(
                    f"campaign {campaign.name!r} failed: {type(exc).__name__}: {exc} (traceback in {log}). "
                    f"Fix the cause, then `autoresearch resume {campaign.name}`."
                ) from None
            if not _pause_disk_full(ledger, exc, display):
                raise RunnerError(f"campaign {campaign.name!r}: {_disk_full_text(campaign.name, exc)}") from None
        finally:
            wal.close()
            _end_run(ledger)
            if launcher is not None:
                launcher.close()  # its unused spare runs, deleted through the tracker
            writer = tracker.close(detach=not settings.wait_for_tracking)
            if writer is not None:
                display.event(f"tracking: {tracker.pending_at_close} MLflow writes pending, applied by writer pid {writer}; "
                              f"`autoresearch status {campaign.name}` shows when they are done")  # fmt: skip
            display.close()
            connection.close()
            inbox.close()
            client.close()
        return RunOutcome(
            name=campaign.name, state=ledger.state, reason=ledger.state_reason, policy=kind,
            status=_status_after(ledger, tracker.pending_at_close, writer), tracking_pending=tracker.pending_at_close,
            tracking_writer_pid=writer,
        )  # fmt: skip


def _check_change(before: Campaign, after: Campaign, trials: list[TrialRecord]) -> None:
    """RunnerError when the edited config would change what the trials already run mean."""
    problem = refused_change(before, after, trials)
    if problem is not None:
        raise RunnerError(problem)


def _say_changes(ledger: Ledger, before: Campaign, display: Display) -> None:
    """Show and note what this run changes in the config the campaign last ran with."""
    changes = config_changes(before, ledger.campaign)
    if changes:
        text = f"config changed since campaign {before.name} last ran: " + "; ".join(changes)
        ledger.append_note(text, author="runner")
        display.event(text)


def _status_after(ledger: Ledger, pending: int, writer: int | None) -> CampaignStatus:
    """The status as the runner leaves it (its writer may not have taken the outbox's lock yet)."""
    return campaign_status(ledger).model_copy(update={"tracking_pending": pending, "tracking_writer_pid": writer})


def _begin_run(ledger: Ledger) -> None:
    """Stamp the run's start; a run whose runner was killed is credited with the time up to its
    last ended trial first (idle hours between runs never count toward `elapsed`)."""
    facts, now = ledger.facts(), datetime.now(UTC)
    ledger.update_facts(active_s=active_seconds(facts, ledger.trials(), now, live=False), run_started_at=now)


def _end_run(ledger: Ledger) -> None:
    """Add this run's time to the campaign's active time (not possible when the ledger itself failed)."""
    try:
        facts = ledger.facts()
        ledger.update_facts(active_s=active_seconds(facts, [], datetime.now(UTC), live=True), run_started_at=None)
    except Exception:  # noqa: BLE001 - the caller is already reporting what broke the ledger
        pass


_EXPIRING = frozenset({"pause", "stop", "cancel", "try", "window_end"})
"""Steering kinds meant for the run that was live when they were sent (budget, space and priority
changes are kept: they change the campaign itself)."""


def _expire_steering(inbox: Inbox, ledger: Ledger, state: CampaignState, ended_at: datetime, display: Display) -> None:
    """Pending messages of `_EXPIRING` kinds sent after the campaign ended: marked expired with a
    note, so a `/stop` sent to a finished campaign does not cancel the fresh trials of its next run."""
    for message in inbox.messages(pending_only=True):
        if message.kind in _EXPIRING and message.ts >= ended_at.timestamp():
            note = (f"inbox #{message.id} {message.kind} from {message.author} expired: it was sent after the campaign "
                    f"had {state.value} ({ended_at:%Y-%m-%d %H:%M} UTC), to no live run; send it again to apply it now")  # fmt: skip
            inbox.mark_handled(message.id, note)
            ledger.append_note(note, author="runner")
            display.event(note)


def _open_state(paths: CampaignPaths) -> tuple[Inbox, sqlite3.Connection]:
    """The inbox and the graph's checkpoint connection, or RunnerError naming the file that is not
    a usable SQLite database."""
    try:
        inbox = Inbox(paths)
    except InboxError as exc:
        raise RunnerError(str(exc)) from None
    try:
        connection = sqlite3.connect(paths.graph_db, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")  # checkpoints: a commit survives a killed process,
        connection.execute("PRAGMA synchronous=NORMAL")  # without an fsync per node
        connection.execute("PRAGMA schema_version").fetchone()
    except sqlite3.DatabaseError as exc:
        inbox.close()
        raise RunnerError(
            f"{paths.graph_db} is not a usable SQLite database ({exc}). Move it away (the runner then resumes "
            f"from the trial ledger) or restore it from a backup, then run `autoresearch resume {paths.name}`."
        ) from None
    return inbox, connection


def _open_tracker(campaign: Campaign, home: str | os.PathLike[str] | None, display: Display,
                  connection: sqlite3.Connection, outbox: Path) -> QueuedTracker:
    """The run's tracker (its writes queued in `outbox`), or RunnerError naming `tracking.uri`
    when its store cannot be opened."""
    try:
        config = resolve_tracking(campaign.tracking.uri, home)
        return QueuedTracker(MlflowTracker(config), on_error=display.event, outbox=outbox)
    except Exception as exc:  # noqa: BLE001 - MLflow raises many kinds; each means the same to the user
        connection.close()
        if (cause := corrupt_cause(exc)) is not None:  # the URI is right; the file behind it is not a store
            raise RunnerError(
                f"campaign {campaign.name!r}: the MLflow store {config.tracking_uri} is not a usable SQLite "
                f"database ({cause}). Restore that file from a backup, or move it away (a new, empty store is "
                "made there; every campaign's runs in the old one stay in the moved file), then run it again."
            ) from None
        raise RunnerError(
            f"campaign {campaign.name!r}: cannot open the MLflow store (tracking.uri "
            f"{campaign.tracking.uri or 'default'!r}): {type(exc).__name__}: {exc}. Fix tracking.uri in the "
            "config (sqlite:///path/to/mlflow.db, a .db path or http://host:5000) and run it again."
        ) from None


def _disk_full_text(name: str, exc: BaseException) -> str:
    return (f"paused: the disk is full ({type(exc).__name__}: {exc}). Running trials keep their jobs, unlaunched "
            f"ones wait; free space (`df -h`), then `autoresearch resume {name}` continues where it stopped")


def _pause_disk_full(ledger: Ledger, exc: BaseException, display: Display) -> bool:
    """A full disk pauses the campaign (nothing is failed or spent). False when even the ledger
    cannot be written: it stays as it was, and the caller raises the message instead."""
    reason = _disk_full_text(ledger.campaign.name, exc)
    try:
        ledger.set_state(CampaignState.paused, reason)
        ledger.append_note(reason, author="runner")
    except Exception:  # noqa: BLE001 - the same full disk
        return False
    display.event(reason)
    return True


def _fail(ledger: Ledger, exc: BaseException, *, what: str = "the runner failed",
          paths: CampaignPaths | None = None) -> Path | None:
    """The campaign fails with `exc` as its reason and no trial is left `proposed` (the ones
    without a job fail as `not_launched`). With `paths`: the traceback goes to the campaign's
    `runner-error.log`, whose path is returned."""
    log = None
    if paths is not None and paths.root.is_dir():
        log = paths.root / "runner-error.log"
        log.write_text("".join(traceback.format_exception(exc)))
    reason = f"{what}: {exc}" + (f" (traceback in {log})" if log else "")
    try:
        for trial in ledger.unlaunched():
            ledger.fail(trial.number, TrialFailure.not_launched, log_excerpt=reason)
        if left := [t.number for t in ledger.running()]:  # their jobs may still run: resume reads them again
            reason += (f". Trials {', '.join(map(str, left))} were running and stay so until `autoresearch resume "
                       f"{ledger.campaign.name}` reads their jobs again, once the cause above is fixed")
        if ledger.state in (CampaignState.running, CampaignState.paused):
            ledger.set_state(CampaignState.failed, reason)
    except Exception:  # noqa: BLE001 - the ledger itself may be what failed; the caller reports exc
        pass
    return log


def _drive(nodes: SteeredNodes, connection: sqlite3.Connection, thread: str) -> None:
    """Invoke the graph: continue a cut-off round from its checkpoint, else start a round. While
    the graph waits on an approval (`interrupt()`), wait for the answer and resume with it."""
    graph = build_graph(nodes).compile(checkpointer=SqliteSaver(connection))
    config: RunnableConfig = {"configurable": {"thread_id": thread}, "recursion_limit": RECURSION_LIMIT}
    snapshot = graph.get_state(config)
    if snapshot.next:
        graph.invoke(None, config, durability="sync")
    else:
        graph.invoke({**snapshot.values, "ended": None}, config, durability="sync")
    while graph.get_state(config).interrupts:
        answer = wait_for_answer(nodes.ctx, nodes.ctx.inbox, on_give_up=nodes.wind_down)
        if answer is None:
            return  # the window ended while waiting: the question is asked again next time
        graph.invoke(Command(resume=answer), config, durability="sync")


def _ended_elsewise(ended: RunOutcome, changes: list[str]) -> str:
    """Why `run` with a changed config does not run a campaign that has ended."""
    return (
        f"campaign {ended.name!r} has already {ended.state.value} ({ended.reason.split('. ')[0]}) under another "
        f"config, and nothing ran: this config differs in {'; '.join(changes)}. To run this config, give it a new "
        f"`name` (a new campaign); to look at the old one, `autoresearch status {ended.name}` (or restore its values"
        + (f", then `autoresearch resume {ended.name}`)" if ended.state is CampaignState.stopped else ")")
    )


def _check_ended(ledger: Ledger, start: Start) -> RunOutcome | None:
    """An outcome when there is nothing to run; else set the state the runner starts in."""
    state, campaign = ledger.state, ledger.campaign
    if state is CampaignState.completed:
        status = campaign_status(ledger)
        best = status.best_trial.mean if status.best_trial else None
        ended = stop_reason(campaign, status.budget_used, best, ledger.started_at) is not None
        if ended or confirmed_early(campaign, ledger.trials()):
            reason = (
                f"{ledger.state_reason}. To run more trials, raise budget.max_trials (now "
                f"{campaign.budget.max_trials}) in the config, or pass --max-trials N, and run it again."
            )
            return RunOutcome(name=campaign.name, state=state, reason=reason, already_ended=True, status=status)
        ledger.set_state(CampaignState.running, "the budget was raised")
    elif state is CampaignState.stopped and start is Start.run:
        reason = f"{ledger.state_reason}. `autoresearch resume {campaign.name}` continues it."
        return RunOutcome(
            name=campaign.name, state=state, reason=reason, already_ended=True, status=campaign_status(ledger)
        )
    elif state is CampaignState.failed or (start is Start.resume and state is not CampaignState.running):
        ledger.set_state(CampaignState.running, f"resumed from {state.value}")
    return None

