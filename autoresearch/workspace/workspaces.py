"""Per-trial workspaces of a code-edit campaign: `<campaign dir>/workspaces/trial-N/`.

A workspace is an overlay of the campaign's cwd: the editable files are real copies of the
parent trial's version (the cwd's for a trial without a parent) with the trial's patch
applied; the fixed files are real copies from the cwd (so no trial can alter the evaluation
the next one is judged by); everything else is a symlink to the cwd entry (data, helper
modules), so a workspace costs only the code. `.git` is left out. The trial's command runs
in its workspace.

Workspaces are built in a temporary folder and renamed into place, so a crash never leaves
a half-made one; `prepare` is idempotent and rebuilds a missing parent from its own parent.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from pathlib import Path, PurePosixPath

from autoresearch.campaign import CampaignPaths, TrialLedger, TrialRecord
from autoresearch.workspace.patches import ParsedPatch, apply_patch, check_paths, parse_patch
from tracking import PARENT_TRIAL_TAG, RERUN_OF_TAG, Tracker

_SKIP = {".git"}
_TEXT_LIMIT = 200_000
"""Editable files larger than this are not shown to the model (their size is)."""


class Workspaces:
    """The workspaces of one code-edit campaign, read from its ledger."""

    def __init__(self, ledger: TrialLedger) -> None:
        if ledger.campaign.code is None:
            raise ValueError(f"campaign {ledger.campaign.name!r} has no `code:` section, so no workspaces")
        self.ledger = ledger
        self.code = ledger.campaign.code
        self.cwd = ledger.campaign.cwd
        self.root = CampaignPaths(ledger.folder).workspaces_dir
        """Where the workspaces live: next to the campaign's ledger."""

    def path(self, number: int) -> Path:
        return self.root / f"trial-{number}"

    def source(self, parent: int | None) -> Path:
        """The folder holding the parent's version of the editable files (the cwd for None)."""
        return self.cwd if parent is None else self.prepare(parent)

    def prepare(self, number: int) -> Path:
        """Trial `number`'s workspace, made if missing; PatchError if its patch does not apply."""
        final = self.path(number)
        if final.is_dir():
            return final
        trial = self.ledger.trial(number)
        source = self.source(trial.parent_trial)
        self.root.mkdir(parents=True, exist_ok=True)
        tmp = self.root / f".trial-{number}.{uuid.uuid4().hex[:8]}"
        try:
            copies = {rel: source for rel in self.code.editable} | {rel: self.cwd for rel in self.code.fixed}
            _overlay(self.cwd, tmp, copies)
            if trial.patch:
                apply_patch(self.checked(trial.patch), tmp)
            os.rename(tmp, final)
        except OSError:
            if not final.is_dir():  # a concurrent prepare of the same trial won the rename
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return final

    def checked(self, patch: str) -> ParsedPatch:
        """`patch` parsed and its paths checked against the editable and fixed lists."""
        parsed = parse_patch(patch)
        check_paths(parsed, self.code)
        return parsed

    def check(self, patch: str, parent: int | None) -> ParsedPatch:
        """Refuse (PatchError) a patch that touches files it may not or does not apply to the parent."""
        parsed = self.checked(patch)
        source = self.source(parent)
        self.root.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.root, prefix=".check-") as tmp:
            for rel in self.code.editable:
                _copy(source / rel, Path(tmp) / rel)
            apply_patch(parsed, Path(tmp))
        return parsed

    def files(self, parent: int | None) -> dict[str, str]:
        """The parent's editable files: path -> text (a note instead of the text for binary or huge files)."""
        source = self.source(parent)
        out: dict[str, str] = {}
        for rel in self.code.editable:
            top = source / rel
            paths = sorted(p for p in top.rglob("*") if p.is_file()) if top.is_dir() else [top]
            for path in paths:
                if "__pycache__" in path.parts or not path.is_file():
                    continue
                name = str(PurePosixPath(path.relative_to(source)))
                out[name] = _text(path)
        return out


def _text(path: Path) -> str:
    size = path.stat().st_size
    if size > _TEXT_LIMIT:
        return f"[{size} bytes: too large to show]"
    try:
        return path.read_text()
    except UnicodeDecodeError:
        return f"[{size} bytes of binary data]"


def _overlay(src: Path, dst: Path, copies: dict[str, Path]) -> None:
    """Make `dst` mirror `src`: paths in `copies` copied from the folder they map to, their
    ancestors real folders, every other entry a symlink into `src`."""
    dst.mkdir(parents=True)
    rels = {str(PurePosixPath(rel)): origin for rel, origin in copies.items()}
    for entry in sorted(src.iterdir()):
        if entry.name in _SKIP:
            continue
        _place(entry.name, src, dst, rels)
    for rel, origin in rels.items():  # copied paths the cwd lacks (created by an earlier patch)
        if not (dst / rel).exists() and (origin / rel).exists():
            _copy(origin / rel, dst / rel)


def _place(rel: str, src: Path, dst: Path, copies: dict[str, Path]) -> None:
    if rel in copies:
        if (copies[rel] / rel).exists():
            _copy(copies[rel] / rel, dst / rel)
        return
    inner = [c for c in copies if c.startswith(rel + "/")]
    if inner and (src / rel).is_dir() and not (src / rel).is_symlink():
        (dst / rel).mkdir()
        for entry in sorted((src / rel).iterdir()):
            _place(f"{rel}/{entry.name}", src, dst, copies)
        return
    (dst / rel).symlink_to((src / rel).resolve())


def _copy(origin: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if origin.is_dir():
        shutil.copytree(origin, target, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    elif origin.exists():
        shutil.copy2(origin, target)


def log_lineage(tracker: Tracker, run_id: str, trial: TrialRecord) -> None:
    """Record a trial's place in the lineage tree in its run: tags `PARENT_TRIAL_TAG` /
    `RERUN_OF_TAG`, and its patch as the artifact `patch/trial-N.patch`."""
    tags = {}
    if trial.parent_trial is not None:
        tags[PARENT_TRIAL_TAG] = str(trial.parent_trial)
    if trial.rerun_of is not None:
        tags[RERUN_OF_TAG] = str(trial.rerun_of)
    if tags:
        tracker.log(run_id, tags=tags)
    if trial.patch:
        tracker.log_text(run_id, trial.patch, f"patch/trial-{trial.number}.patch")

