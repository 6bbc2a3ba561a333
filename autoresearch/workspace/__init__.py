"""Code-edit campaigns: patches (search/replace blocks or unified diffs) and per-trial workspaces."""

from autoresearch.workspace.patches import (
    Edit,
    ParsedPatch,
    PatchError,
    PatchFormat,
    apply_patch,
    check_paths,
    parse_patch,
)
from autoresearch.workspace.workspaces import Workspaces, log_lineage

__all__ = [
    "Edit",
    "ParsedPatch",
    "PatchError",
    "PatchFormat",
    "Workspaces",
    "apply_patch",
    "check_paths",
    "log_lineage",
    "parse_patch",
]
