"""Where a campaign keeps its state: $AUTORESEARCH_HOME/campaigns/<name>/."""

from __future__ import annotations

import os
from pathlib import Path

from compute.paths import resolve_home


def campaigns_root(home: str | os.PathLike[str] | None = None) -> Path:
    """The folder holding one sub-folder per campaign."""
    return resolve_home(home) / "campaigns"


def campaign_dir(name: str, home: str | os.PathLike[str] | None = None) -> Path:
    """The state folder of campaign `name` (not created)."""
    return campaigns_root(home) / name

