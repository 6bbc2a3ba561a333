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

import filecmp
import os
import shutil
import tempfile
import uuid
from pathlib import Path, PurePosixPath

from autoresearch.campaign import CampaignPaths, TrialLedger, TrialRecord
from autoresearch.workspace.patches import ParsedPatch, PatchError, apply_patch, check_paths, parse_patch, under
from tracking import CONFIRMS_TAG, PARENT_TRIAL_TAG, Tracker

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
            self._build(tmp, source, self.checked(trial.patch) if trial.patch else None)
            os.rename(tmp, final)
        except OSError:
            if not final.is_dir():  # a concurrent prepare of the same trial won the rename
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return final

    def _build(self, tmp: Path, source: Path, patch: ParsedPatch | None) -> None:
        """Make the overlay at `tmp`: editable files copied from `source`, fixed ones from the cwd,
        then `patch` applied; PatchError if the patch fails or changed a fixed file anyway."""
        copies = dict.fromkeys(self.code.editable, source) | dict.fromkeys(self.code.fixed, self.cwd)
        _overlay(self.cwd, tmp, copies, exclude=self.ledger.folder.parents[1].resolve())
        for rel in self.code.fixed:  # always the original, even where an editable folder holds it
            _replace(self.cwd / rel, tmp / rel)
        if patch is None:
            return
        apply_patch(patch, tmp)
        for rel in self.code.fixed:
            if not _same(self.cwd / rel, tmp / rel):
                raise PatchError(
                    f"the patch changed {rel}, which is fixed (the evaluation every trial is judged by); "
                    f"change only the editable files: {', '.join(self.code.editable)}"
                )

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
            self._build(Path(tmp) / "ws", source, parsed)
        return parsed

    def files(self, parent: int | None) -> dict[str, str]:
        """The parent's editable files: path -> text (a note instead of the text for binary or huge files)."""
        source = self.source(parent)
        out: dict[str, str] = {}
        for rel in self.code.editable:
            for path in _tree(source / rel):
                name = str(PurePosixPath(path.relative_to(source)))
                if any(under(name, fixed) for fixed in self.code.fixed):
                    continue
                out[name] = _text(path)
        return out


def _tree(top: Path) -> list[Path]:
    """`top` and the files below it, sorted, without descending into symbolic links or caches."""
    if top.is_symlink() or not top.is_dir():
        return [top] if top.is_symlink() or top.is_file() else []
    found: list[Path] = []
    for folder, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP and d != "__pycache__")
        found.extend(Path(folder) / d for d in dirs if (Path(folder) / d).is_symlink())
        found.extend(Path(folder) / n for n in names)
    return sorted(found)


def _text(path: Path) -> str:
    if path.is_symlink():
        return (
            f"[a symbolic link to {os.readlink(path)}: not shown, and patches may not change it; "
            "only regular files are editable]"
        )
    if not path.is_file():
        return "[not a regular file: not shown]"
    size = path.stat().st_size
    if size > _TEXT_LIMIT:
        return f"[{size} bytes: too large to show]"
    try:
        return path.read_text()
    except UnicodeDecodeError:
        return f"[{size} bytes of binary data]"


def _overlay(src: Path, dst: Path, copies: dict[str, Path], exclude: Path) -> None:
    """Make `dst` mirror `src`: paths in `copies` (and everything below them) copied from the
    folder they map to, their ancestors real folders, every other entry a symlink into `src`.
    `exclude` (the autoresearch home, when it lies inside the cwd) is never copied."""
    rels = {str(PurePosixPath(rel)): origin for rel, origin in copies.items()}
    if "." in rels:  # the whole cwd is editable: a real copy of it all, never links into the original
        _copy(rels["."] / ".", dst, exclude)
    else:
        dst.mkdir(parents=True)
        for entry in sorted(src.iterdir()):
            if entry.name not in _SKIP:
                _place(entry.name, src, dst, rels)
    for rel, origin in rels.items():  # copied paths the cwd lacks (created by an earlier patch)
        if not (dst / rel).exists() and (origin / rel).exists():
            _copy(origin / rel, dst / rel)


def _place(rel: str, src: Path, dst: Path, copies: dict[str, Path]) -> None:
    if rel in copies:
        _copy(copies[rel] / rel, dst / rel)
        return
    inner = [c for c in copies if c.startswith(rel + "/")]
    if inner and (src / rel).is_dir() and not (src / rel).is_symlink():
        (dst / rel).mkdir()
        for entry in sorted((src / rel).iterdir()):
            _place(f"{rel}/{entry.name}", src, dst, copies)
        return
    (dst / rel).symlink_to((src / rel).resolve())


def _copy(origin: Path, target: Path, exclude: Path | None = None) -> None:
    """A real copy of a file or folder; symbolic links stay links (never followed), so a patch
    cannot reach their targets (see `regular_target`). `exclude`: a folder left out."""
    if not origin.exists() and not origin.is_symlink():
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    if origin.is_symlink():
        target.symlink_to(os.readlink(origin))
    elif origin.is_dir():
        def ignore(folder: str, names: list[str]) -> set[str]:
            skip = {n for n in names if n in _SKIP or n == "__pycache__"}
            if exclude is not None and Path(folder).resolve() == exclude.parent:
                skip |= {n for n in names if n == exclude.name}
            return skip

        shutil.copytree(origin, target, symlinks=True, ignore=ignore, dirs_exist_ok=True)
    else:
        shutil.copy2(origin, target)


def _replace(original: Path, target: Path) -> None:
    """`target` made a fresh copy of `original` (its content, links followed: the real evaluation)."""
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
    if original.is_dir():
        shutil.copytree(original.resolve(), target, ignore=shutil.ignore_patterns("__pycache__"))
    elif original.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(original, target)
        shutil.copymode(original, target)


def _same(original: Path, copy: Path) -> bool:
    """Whether `copy` still holds exactly what `original` holds (files compared byte for byte)."""
    if original.is_file():
        return copy.is_file() and not copy.is_symlink() and filecmp.cmp(original, copy, shallow=False)
    if not original.is_dir():
        return not copy.exists() and not copy.is_symlink()
    if copy.is_symlink() or not copy.is_dir():
        return False
    names = {p.name for p in original.iterdir() if p.name != "__pycache__"}
    if names != {p.name for p in copy.iterdir() if p.name != "__pycache__"}:
        return False
    return all(_same(original / name, copy / name) for name in names)


def log_lineage(tracker: Tracker, run_id: str, trial: TrialRecord) -> None:
    """Record a trial's place in the lineage tree in its run: tags `PARENT_TRIAL_TAG` /
    `CONFIRMS_TAG`, and its patch as the artifact `patch/trial-N.patch`."""
    tags = {}
    if trial.parent_trial is not None:
        tags[PARENT_TRIAL_TAG] = str(trial.parent_trial)
    if trial.confirms is not None:
        tags[CONFIRMS_TAG] = str(trial.confirms)
    if tags:
        tracker.log(run_id, tags=tags)
    if trial.patch:
        tracker.log_text(run_id, trial.patch, f"patch/trial-{trial.number}.patch")

