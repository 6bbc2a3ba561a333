"""Nightly unattended sweeps: campaigns inside a time window at low, preemptible priority,
resumed night after night, with a morning report. The window itself (its end, a cut, winding
a campaign down) lives in `autoresearch.steering.window`.

    night = Night([Path("a.yaml"), Path("b.yaml")], window_end("07:00", None))
    result = night.run()
    print(write_morning_report(result))
"""

from autoresearch.nightly.night import NIGHTLY_SETTINGS, CampaignNight, Night, NightResult, nightly_campaign
from autoresearch.nightly.report import write_morning_report
from autoresearch.nightly.snapshot import (
    CampaignSnapshot,
    NightSnapshot,
    previous_snapshot,
    save_snapshot,
    snapshot_campaign,
)
from autoresearch.steering.window import WindowError, window_end

__all__ = [
    "NIGHTLY_SETTINGS",
    "CampaignNight",
    "CampaignSnapshot",
    "Night",
    "NightResult",
    "NightSnapshot",
    "WindowError",
    "nightly_campaign",
    "previous_snapshot",
    "save_snapshot",
    "snapshot_campaign",
    "window_end",
    "write_morning_report",
]
