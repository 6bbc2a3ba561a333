"""The nightly window, in one place: reading `--until 07:00` / `--duration SECONDS`, the
window's effective end (an earlier cut posted by nightly on SIGTERM), and winding a campaign down
when it ends.

`autoresearch nightly` gives each runner `until`; the runner launches nothing after the window's
end and the first replan after it calls `Window.wind_down`: the campaign pauses with a reason
starting with `NIGHTLY_PAUSE` (which nightly resumes the next night), running trials are stopped
with SIGTERM (they save a checkpoint) without a verdict and queued again.
"""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta
from typing import Protocol

from autoresearch.campaign import CampaignState, Ledger, Proposal, TrialRecord, TrialState
from autoresearch.steering.commands import WindowEnd

NIGHTLY_PAUSE = "nightly window ended"
"""How a pause by the nightly window's end starts its reason (nightly resumes those)."""


class WindowError(ValueError):
    """The window cannot be read; the message shows the expected form."""


def window_end(until: str | None, duration_s: float | None, now: datetime | None = None) -> datetime:
    """The aware local datetime a window given as `--until` or `--duration` ends at."""
    now = (now or datetime.now()).astimezone()
    if (until is None) == (duration_s is None):
        raise WindowError("give exactly one of --until HH:MM (e.g. --until 07:00) or --duration SECONDS")
    if duration_s is not None:
        if duration_s <= 0:
            raise WindowError(f"--duration must be a positive number of seconds, not {duration_s}")
        return now + timedelta(seconds=duration_s)
    assert until is not None
    text = until.strip()
    if re.fullmatch(r"\d{1,2}:\d{2}(:\d{2})?", text):
        try:
            at = time.fromisoformat(text.zfill(len(text) + (text.index(":") == 1)))
        except ValueError:
            raise WindowError(f"--until {until!r} is not a time of day like 07:00") from None
        end = datetime.combine(now.date(), at).astimezone()
        return end if end > now else end + timedelta(days=1)
    try:
        end = datetime.fromisoformat(text).astimezone()
    except ValueError:
        raise WindowError(f"--until {until!r} is neither a time of day like 07:00 nor an ISO datetime") from None
    if end <= now:
        raise WindowError(f"--until {until} has already passed (now {now:%Y-%m-%d %H:%M:%S})")
    return end


class WindDown(Protocol):
    """What winding a campaign down acts on (a `SteeringTarget` is one)."""

    ledger: Ledger

    def event(self, text: str) -> None: ...

    def cancel_trial(self, trial: TrialRecord, reason: str) -> None: ...


class Window:
    """A runner's window: none (`until` None: the campaign runs until it ends), or an end."""

    def __init__(self, until: datetime | None = None) -> None:
        self.until = until
        """The end the runner was given (an aware datetime)."""
        self.cut: datetime | None = None
        """An earlier end, from a `WindowEnd` command with `at`."""

    @property
    def end(self) -> datetime | None:
        """The window's effective end: `until`, or the earlier cut nightly posted."""
        ends = [end for end in (self.until, self.cut) if end is not None]
        return min(ends) if ends else None

    def past(self, now: datetime | None = None) -> bool:
        end = self.end
        return end is not None and (now or datetime.now().astimezone()) >= end

    def apply(self, command: WindowEnd) -> str:
        """A `WindowEnd` command: with `at`, the window ends then (if earlier). Returns the outcome."""
        if command.at is None:
            return "the nightly window ended"
        self.cut = command.at if self.cut is None else min(self.cut, command.at)
        return f"the nightly window ends early, at {command.at:%H:%M:%S}"

    def wind_down(self, target: WindDown) -> int:
        """At the window's end: pause the campaign, stop running trials (SIGTERM: they save a
        checkpoint) without a verdict, and queue each again for the next night as a trial that
        resumes it (`resume_of`: same parameters and seed, from its checkpoint). Idempotent.
        Returns how many trials it stopped."""
        end = self.end
        assert end is not None, "wind_down needs a window end"
        ledger = target.ledger
        reason = f"{NIGHTLY_PAUSE} at {end:%H:%M}; `autoresearch nightly` (or `autoresearch resume`) continues it"
        if ledger.state is CampaignState.running:
            ledger.set_state(CampaignState.paused, reason)
        queued = {t.resume_of for t in ledger.trials() if t.state is TrialState.proposed}
        stopped = 0
        for trial in ledger.running():
            again = f"nightly re-run of trial {trial.number} (stopped when the window ended), from its checkpoint"
            if trial.number not in queued:
                ledger.admit(Proposal(params=trial.params, patch=trial.patch, parent_trial=trial.parent_trial,
                                      resume_of=trial.number, rationale=again, hypothesis=trial.hypothesis))  # fmt: skip
            target.cancel_trial(trial, f"{NIGHTLY_PAUSE}: re-run queued for the next night")
            stopped += 1
        if stopped:
            ledger.append_note(f"{NIGHTLY_PAUSE}: {stopped} running trial(s) stopped and queued again", "runner")
        target.event(f"the window ended at {end:%H:%M}: {stopped} running trial(s) stopped")
        return stopped
