"""Code-edit campaigns: patches (search/replace blocks or unified diffs) and per-trial workspaces."""

from autoresearch.workspace.diffs import unquote
from autoresearch.workspace.patches import (
    Edit,
    ParsedPatch,
    PatchError,
    PatchFormat,
    apply_patch,
    check_paths,
    parse_patch,
    regular_target,
    under,
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
    "regular_target",
    "under",
    "unquote",
]
