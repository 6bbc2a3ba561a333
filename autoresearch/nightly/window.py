"""The end of a nightly window: `--until 07:00` (the next 07:00) or `--duration SECONDS`."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta


class WindowError(ValueError):
    """The window cannot be read; the message shows the expected form."""


def window_end(until: str | None, duration_s: float | None, now: datetime | None = None) -> datetime:
    """The aware local datetime the window ends at."""
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
