"""One unattended night: run campaigns inside a time window at low, preemptible priority.

Campaigns run **concurrently**, one runner thread each, for the whole window: the compute
scheduler shares the slots between them by priority (all get the nightly priority), so no
slot idles while one campaign waits on its last trials, and none waits its turn.

Each campaign is supervised: a fault (the compute daemon unreachable, a runner error, an LLM
provider down: the runner pauses, the supervisor resumes) is recorded and retried after a
pause, until the window ends; it never ends the night early (a runner paused for an LLM
outage is sent `resume` after `retry_s`). A campaign a person paused or
stopped is left alone. At the window's end the runner launches nothing more, pauses the
campaign, and stops running trials with SIGTERM through compute (they save a checkpoint),
without a verdict: each goes back in the queue as a new proposal for the next night. The
same command the next night resumes every campaign it paused.
"""

from __future__ import annotations

import os
import threading
import time
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from autoresearch.campaign import Campaign, CampaignPaths, CampaignState, ConfigError, Ledger, LedgerError, load_campaign
from autoresearch.runner import PolicyFactory, RunnerBusy, RunnerSettings, Start, run_campaign
from autoresearch.steering import NIGHTLY_PAUSE, Command, Resume, WindowEnd, post
from compute import Client, ComputeError, parse_priority
from tracking import CAMPAIGN_LABEL

Home = str | os.PathLike[str] | None

_LLM_PAUSE = "LLM provider is unavailable"
NIGHTLY_SETTINGS = RunnerSettings(poll_s=0.5, heartbeat_s=5.0)
"""Runner timing at night: a short heartbeat keeps the window's end within seconds."""


class CampaignNight(BaseModel):
    """What happened to one campaign tonight."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    config: str
    """The config file."""
    name: str | None = None
    """The campaign name (None when the config could not be read)."""
    ran: bool = False
    """A runner worked on it tonight."""
    skipped: str = ""
    """Why it did not run (stopped or paused by a person, another runner, a bad config)."""
    faults: list[str] = Field(default_factory=list)
    """Faults met and retried (compute, LLM, runner)."""
    final_state: str = ""
    """The campaign's state when the night ended."""


class NightResult(BaseModel):
    """A whole night."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    night: str
    """The night id: its local start time."""
    started_at: datetime
    until: datetime
    ended_at: datetime | None = None
    campaigns: list[CampaignNight] = Field(default_factory=list)
    jobs_left_running: int = 0
    """Jobs of tonight's campaigns still pending or running when the night ended (should be 0)."""
    ended_early: str = ""
    """Why the window was cut short (SIGTERM, Ctrl-C); empty when it ran to `until`."""


def nightly_campaign(campaign: Campaign, priority: int | str, borrowed: bool = True) -> Campaign:
    """The campaign at the nightly priority, preemptible (daytime work preempts it) and, by default,
    borrowed only: its trials never hold guaranteed quota, so the next morning's work of any project
    reclaims their GPUs without a human (docs/projects.md)."""
    update = {"priority": parse_priority(priority), "preemptible": True, "borrowed_only": borrowed}
    compute = campaign.compute.model_copy(update=update)
    return campaign.model_copy(update={"compute": compute})


def _skip_reason(name: str, home: Home) -> str:
    """Why a campaign should not run tonight ('' when it should)."""
    if not CampaignPaths.of(name, home).exists():
        return ""
    ledger = Ledger.load(name, home)
    state, reason = ledger.state, ledger.state_reason
    if state is CampaignState.stopped:
        return f"stopped ({reason}); `autoresearch resume {name}` to run it again"
    if state is CampaignState.paused and not (reason.startswith(NIGHTLY_PAUSE) or _LLM_PAUSE in reason):
        return f"paused by a person ({reason}); /resume in `autoresearch chat {name}` lets nightly continue it"
    return ""


class Night:
    """Supervises tonight's campaigns until `until`."""

    def __init__(self, configs: list[Path], until: datetime, *, home: Home = None, priority: int | str = "low",
                 retry_s: float = 30.0, settings: RunnerSettings = NIGHTLY_SETTINGS, borrowed: bool = True,
                 policy_factory: PolicyFactory | None = None) -> None:  # fmt: skip
        self.configs = configs
        self.until = until
        self.home = home
        self.priority = priority
        self.borrowed = borrowed
        """Trials run borrowed only (`nightly --guaranteed` turns it off)."""
        self.retry_s = retry_s
        self.settings = settings
        self.policy_factory = policy_factory
        """Builds each campaign's policy (default: `default_policy`)."""
        self.started_at = datetime.now().astimezone()
        self.result = NightResult(night=self.started_at.strftime("%Y-%m-%dT%H-%M-%S"), started_at=self.started_at,
                                  until=until)  # fmt: skip
        self._lock = threading.Lock()
        self._cut: datetime | None = None

    @property
    def end(self) -> datetime:
        """When the window ends: `until`, or earlier after `stop()`."""
        return min(self.until, self._cut) if self._cut else self.until

    def stop(self, why: str) -> None:
        """End the window now: the runners wind down as at `until` (running trials stopped with
        SIGTERM and queued for the next night), then the night ends. Safe in a signal handler:
        it only sets fields (no locks); the night's loops poll them."""
        if self._cut is None:
            self._cut = datetime.now().astimezone()
            self.result.ended_early = f"{why} at {self._cut:%H:%M:%S}"

    def say(self, text: str) -> None:
        line = f"{datetime.now():%H:%M:%S} {text}"
        with self._lock:
            print(line, flush=True)

    def run(self) -> NightResult:
        threads = []
        for config in self.configs:
            entry = CampaignNight(config=str(config))
            self.result.campaigns.append(entry)
            try:
                campaign = nightly_campaign(load_campaign(config), self.priority, self.borrowed)
            except ConfigError as exc:
                entry.skipped = str(exc)
                self.say(f"{config}: skipped: {exc}")
                continue
            entry.name = campaign.name
            thread = threading.Thread(target=self._supervise, args=(campaign, entry), daemon=True)
            thread.start()
            threads.append((thread, entry))
        self._watch(threads)
        for thread, _ in threads:
            thread.join(timeout=max(60.0, self.settings.heartbeat_s * 6))
        self.result.jobs_left_running = self._settle([entry.name for _, entry in threads if entry.name])
        self.result.ended_at = datetime.now().astimezone()
        return self.result

    def _watch(self, threads: list[tuple[threading.Thread, CampaignNight]]) -> None:
        """Until the window ends (or every campaign is done): resume, after `retry_s`, a live
        campaign the runner paused because its LLM provider was down. Then wake the runners."""
        paused_since: dict[str, float] = {}
        while datetime.now().astimezone() < self.end and any(t.is_alive() for t, _ in threads):
            for thread, entry in threads:
                if thread.is_alive() and entry.name:
                    self._resume_after_outage(entry, paused_since)
            self._nap(1.0)
        if self._cut is not None:
            self.say(f"the window was cut short ({self.result.ended_early}): winding the campaigns down")
        for thread, entry in threads:
            if thread.is_alive() and entry.name:
                self._post(entry.name, WindowEnd(at=self._cut))

    def _resume_after_outage(self, entry: CampaignNight, paused_since: dict[str, float]) -> None:
        name = entry.name or ""
        try:
            ledger = Ledger.load(name, self.home)
        except LedgerError:
            return  # not created yet
        if not (ledger.state is CampaignState.paused and _LLM_PAUSE in ledger.state_reason):
            paused_since.pop(name, None)
            return
        since = paused_since.setdefault(name, time.monotonic())
        if time.monotonic() - since >= self.retry_s:
            entry.faults.append(ledger.state_reason)
            self.say(f"{name}: retrying after a fault: {ledger.state_reason}")
            self._post(name, Resume())
            paused_since.pop(name, None)

    def _post(self, name: str, command: Command) -> None:
        try:
            post(name, command, author="nightly", home=self.home)
        except Exception as exc:  # noqa: BLE001 - best effort; the runner's heartbeat and the next night cover it
            self.say(f"{name}: could not post {command.kind} ({exc})")

    def _supervise(self, campaign: Campaign, entry: CampaignNight) -> None:
        name = campaign.name
        while datetime.now().astimezone() < self.end:
            entry.skipped = _skip_reason(name, self.home)
            if entry.skipped:
                self.say(f"{name}: skipped: {entry.skipped}")
                break
            try:
                entry.ran = True
                outcome = run_campaign(campaign, home=self.home, start=Start.resume, settings=self.settings,
                                       until=self.until, display=_Prefixed(self, name),
                                       policy_factory=self.policy_factory)  # fmt: skip
            except RunnerBusy as exc:
                entry.skipped = str(exc)
                self.say(f"{name}: skipped: {exc}")
                break
            except Exception as exc:  # noqa: BLE001 - compute, LLM and runner faults never end the night
                self._fault(entry, f"{type(exc).__name__}: {exc}")
                continue
            state = outcome.state
            if state is CampaignState.failed:
                self._fault(entry, outcome.reason)
                continue
            self.say(f"{name}: {state.value}: {outcome.reason}")
            break
        entry.final_state = _state_of(name, self.home)

    def _fault(self, entry: CampaignNight, text: str) -> None:
        entry.faults.append(text)
        left = (self.end - datetime.now().astimezone()).total_seconds()
        self.say(f"{entry.name}: fault, retrying in {min(self.retry_s, max(left, 0)):.0f} s: {text}")
        self._nap(min(self.retry_s, left))

    def _nap(self, seconds: float) -> None:
        """Sleep up to `seconds`, never past the window's end, waking within 0.2 s of `stop()`."""
        deadline = time.monotonic() + seconds
        while (left := min(deadline - time.monotonic(), (self.end - datetime.now().astimezone()).total_seconds())) > 0:
            time.sleep(min(0.2, left))

    def _settle(self, names: list[str]) -> int:
        """Wait for the stopped jobs to end (SIGTERM, grace, SIGKILL); return how many did not."""
        try:
            client = Client(self.home, autostart=False)
        except ComputeError:
            return 0
        try:
            active = [j.id for n in names for j in client.list(states=("pending", "running"), labels={CAMPAIGN_LABEL: n})]
            return sum(not j.state.final for j in client.wait(active, timeout=120)) if active else 0
        except ComputeError as exc:
            self.say(f"could not check the campaigns' jobs: {exc}")
            return 0
        finally:
            client.close()


def _state_of(name: str, home: Home) -> str:
    try:
        return Ledger.load(name, home).state.value
    except LedgerError:
        return "not started"


class _Prefixed:
    """A runner display that writes events to the night's log, prefixed with the campaign."""

    def __init__(self, night: Night, name: str) -> None:
        self.night, self.name = night, name

    def event(self, text: str) -> None:
        self.night.say(f"{self.name}: {text}")

    def update(self, status: object, max_trials: int) -> None:
        return None

    def close(self) -> None:
        return None
