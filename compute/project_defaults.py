"""What a project is until it is set: the default project's name, a project's default settings, and
fair share's default half-life. Plain values (no pydantic): `Project`, `JobSpec` and `DaemonConfig`
declare their fields with them, and `compute projects` (compute/project_report.py) reads them."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_PROJECT = "default"
"""The project of a job that names none."""
FAIR_SHARE_HALF_LIFE_S = 3600.0
"""`DaemonConfig.fair_share_half_life_s` unless set: the half-life of the borrowed usage fair share weighs."""


@dataclass(frozen=True)
class ProjectDefaults:
    """A project's settings until they are set (`compute project set` without the option)."""

    quota_gpus: int = 0
    quota_cpus: float | None = None
    weight: float = 1.0
    max_priority: int = 100
    borrow: bool = True
    lend: bool = True


PROJECT_DEFAULTS = ProjectDefaults()
