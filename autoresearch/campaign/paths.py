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


def tracking_uri(uri: str | None, home: str | os.PathLike[str] | None = None) -> str:
    """The MLflow tracking URI: `uri` when given, else the local store sqlite:///$HOME/mlflow.db."""
    return uri or f"sqlite:///{resolve_home(home) / 'mlflow.db'}"
