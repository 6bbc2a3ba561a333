"""Code patches a policy proposes: search/replace blocks or unified diffs.

Search/replace blocks (applied here, each SEARCH text must occur exactly once)::

    train.py
    <<<<<<< SEARCH
    LR = 0.1
    =======
    LR = 0.3
    >>>>>>> REPLACE

Unified diffs (`--- a/train.py` / `+++ b/train.py` headers, `@@` hunks) are applied with
`git apply` (again with `--recount` when it fails, as models often miscount hunk lines), or the
`patch` program when git is missing. Every failure is a `PatchError` whose message tells the model what to change.

A patch changes only the text of regular files: diffs with symlinks, binary hunks or mode changes
are refused (`diffs.refuse_non_text`), C-quoted paths are unquoted before the path rules see them,
and nothing is written through a symbolic link (`regular_target`).
"""

from __future__ import annotations

import difflib
import enum
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict

from autoresearch.campaign import CodeSettings
from autoresearch.workspace.diffs import git_header_paths, header_path, refuse_non_text, unquote
from autoresearch.workspace.errors import PatchError

_SEARCH = re.compile(r"^\s*<{5,9} ?SEARCH\s*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\s*$")
_DIFF_LINE = re.compile(r"^(--- |\+\+\+ |@@ |diff --git )", re.MULTILINE)
_FORMATS_HELP = (
    "Write either search/replace blocks (the file's path on its own line, then "
    "'<<<<<<< SEARCH', the exact current lines, '=======', the new lines, '>>>>>>> REPLACE') "
    "or a unified diff ('--- a/PATH', '+++ b/PATH', then '@@' hunks)."
)


class PatchFormat(str, enum.Enum):
    """How a patch is written."""

    search_replace = "search_replace"
    unified_diff = "unified_diff"


class Edit(BaseModel):
    """One search/replace block."""

    model_config = ConfigDict(frozen=True)

    path: str
    """The file, relative to the workspace."""
    search: str
    """Text that must occur exactly once in the file (empty: create the file)."""
    replace: str
    """What replaces it."""


class ParsedPatch(BaseModel):
    """A patch, read: its format and the files it touches."""

    model_config = ConfigDict(frozen=True)

    format: PatchFormat
    files: list[str]
    """Paths it changes, creates or deletes, relative to the workspace, in order of appearance."""
    edits: list[Edit] = []
    """Search/replace blocks, in order (search/replace format only)."""
    strip: int = 0
    """Leading path components to strip from the diff's paths (1 for `a/` `b/` prefixes)."""
    text: str
    """The patch as given."""


def parse_patch(text: str) -> ParsedPatch:
    """Read a patch in either format; PatchError when it is neither or is malformed."""
    if not text.strip():
        raise PatchError(f"the patch is empty. {_FORMATS_HELP}")
    lines = text.splitlines()
    if any(_SEARCH.match(line) for line in lines):
        edits = _parse_blocks(lines)
        files = list(dict.fromkeys(edit.path for edit in edits))
        return ParsedPatch(format=PatchFormat.search_replace, files=files, edits=edits, text=text)
    if _DIFF_LINE.search(text):
        refuse_non_text(lines)
        files, strip = _diff_files(lines)
        return ParsedPatch(format=PatchFormat.unified_diff, files=files, strip=strip, text=text)
    raise PatchError(f"the patch is neither search/replace blocks nor a unified diff. {_FORMATS_HELP}")


def _parse_blocks(lines: list[str]) -> list[Edit]:
    edits: list[Edit] = []
    path: str | None = None
    i = 0
    while i < len(lines):
        if not _SEARCH.match(lines[i]):
            i += 1
            continue
        block = len(edits) + 1
        path = _block_path(lines, i) or path
        if path is None:
            raise PatchError(
                f"search/replace block {block} has no file path: put the path (e.g. train.py) on its own "
                "line just before '<<<<<<< SEARCH'"
            )
        label = f"block {block} ({path})"
        search, i = _until(lines, i + 1, _DIVIDER, f"{label} has no '=======' line after its SEARCH part")
        replace, i = _until(lines, i + 1, _REPLACE, f"{label} has no '>>>>>>> REPLACE' line")
        edits.append(Edit(path=_clean_path(path), search=search, replace=replace))
        i += 1
    return edits


def _until(lines: list[str], start: int, end: re.Pattern[str], problem: str) -> tuple[str, int]:
    for j in range(start, len(lines)):
        if end.match(lines[j]):
            body = lines[start:j]
            return ("\n".join(body) + "\n") if body else "", j
    raise PatchError(f"search/replace {problem}. {_FORMATS_HELP}")


def _block_path(lines: list[str], i: int) -> str | None:
    """The file path written above the SEARCH marker at line `i`, if any."""
    j = i - 1
    while j >= 0 and (not lines[j].strip() or lines[j].strip().startswith("```")):
        j -= 1
    if j < 0 or _REPLACE.match(lines[j]):
        return None
    candidate = lines[j].strip().strip("`*").rstrip(":").strip()
    return candidate if candidate and not re.search(r"\s", candidate) else None


def _diff_files(lines: list[str]) -> tuple[list[str], int]:
    pairs: list[tuple[str, str]] = []
    renames: list[str] = []
    for k, line in enumerate(lines):
        if line.startswith("--- ") and k + 1 < len(lines) and lines[k + 1].startswith("+++ "):
            pairs.append((header_path(line[4:]), header_path(lines[k + 1][4:])))
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            renames.append(unquote(line.split(" ", 2)[2].strip()))
        elif line.startswith("diff --git "):  # a mode-only or renamed file has no ---/+++ lines
            heads = git_header_paths(line)
            renames.extend(path.split("/", 1)[1] if path[:2] in ("a/", "b/") else path for path in heads)
    if not pairs:
        raise PatchError(
            "the unified diff has no file headers: each file needs a '--- a/PATH' line and a '+++ b/PATH' "
            f"line before its '@@' hunks. {_FORMATS_HELP}"
        )
    prefixed = all(
        (old == "/dev/null" or old.startswith("a/")) and (new == "/dev/null" or new.startswith("b/"))
        for old, new in pairs
    )
    strip = 1 if prefixed else 0
    files: list[str] = []
    for old, new in pairs:
        for path in (old, new):
            if path != "/dev/null":
                files.append(_clean_path(path.split("/", 1)[1] if strip else path))
    files.extend(_clean_path(path) for path in renames)
    return list(dict.fromkeys(files)), strip


def _clean_path(path: str) -> str:
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or not pure.parts:
        raise PatchError(f"patch path {path!r} must be relative to the campaign's cwd, without '..'")
    return str(pure).removeprefix("./")


def under(path: str, entry: str) -> bool:
    """Whether `path` is `entry` or inside it (`.` holds everything)."""
    entry = str(PurePosixPath(entry))
    return entry in (".", path) or path.startswith(entry.rstrip("/") + "/")


def check_paths(patch: ParsedPatch, code: CodeSettings) -> None:
    """Refuse a patch that touches a fixed file or a file outside the editable list."""
    editable = ", ".join(code.editable) or "(none)"
    for path in patch.files:
        fixed = next((entry for entry in code.fixed if under(path, entry)), None)
        if fixed is not None:
            raise PatchError(
                f"the patch touches {path}, which is fixed ({fixed}: the evaluation every trial is judged by); "
                f"no trial may change it. Change only the editable files: {editable}"
            )
        if not any(under(path, entry) for entry in code.editable):
            raise PatchError(f"the patch touches {path}, which is not editable. Change only: {editable}")


def apply_patch(patch: ParsedPatch, root: Path) -> None:
    """Apply `patch` to the files under `root`, all or nothing; never through a symbolic link."""
    for rel in patch.files:
        regular_target(root, rel)
    if patch.format is PatchFormat.search_replace:
        _apply_blocks(patch.edits, root)
    else:
        _apply_diff(patch, root)


def _apply_blocks(edits: list[Edit], root: Path) -> None:
    texts: dict[str, str | None] = {}
    for n, edit in enumerate(edits, start=1):
        if edit.path not in texts:
            file = regular_target(root, edit.path)
            texts[edit.path] = file.read_text() if file.is_file() else None
        current = texts[edit.path]
        where = f"search/replace block {n} ({edit.path})"
        if current is None:
            if edit.search.strip():
                raise PatchError(f"{where}: the file does not exist; to create it, leave the SEARCH part empty")
            texts[edit.path] = edit.replace
            continue
        if not edit.search.strip():
            raise PatchError(f"{where}: the SEARCH part is empty but the file exists; copy the lines to replace")
        search, replace = edit.search, edit.replace
        if current.count(search) == 0 and current.count(search.rstrip("\n")) == 1:
            search, replace = search.rstrip("\n"), replace.rstrip("\n")
        count = current.count(search)
        if count == 0:
            raise PatchError(f"{where}: {_miss(current, search)}")
        if count > 1:
            raise PatchError(
                f"{where}: the SEARCH text occurs {count} times; include more surrounding lines so it occurs once"
            )
        texts[edit.path] = current.replace(search, replace, 1)
    for path, text in texts.items():
        file = root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text or "")


def regular_target(root: Path, rel: str) -> Path:
    """`root / rel`, refused (PatchError) unless every part of it below `root` is a real folder and
    the file itself is a regular file or absent: a patch never writes through a symbolic link."""
    path = root
    parts = PurePosixPath(rel).parts
    for k, part in enumerate(parts):
        path = path / part
        where = "/".join(parts[: k + 1])
        if path.is_symlink():
            raise PatchError(
                f"{where} is a symbolic link in the workspace; a patch may only change regular files "
                "inside the editable folders. Patch the real file it stands for, if that one is editable."
            )
        if path.exists() and not (path.is_file() if k == len(parts) - 1 else path.is_dir()):
            kind = "file" if k == len(parts) - 1 else "folder"
            raise PatchError(f"{where} is not a regular {kind}; a patch may only change regular text files")
    return path


def _miss(current: str, search: str) -> str:
    first = next((line.strip() for line in search.splitlines() if line.strip()), "")
    lines = current.splitlines()
    close = difflib.get_close_matches(first, [line.strip() for line in lines], n=1, cutoff=0.6)
    near = next((k for k, line in enumerate(lines, start=1) if close and line.strip() == close[0]), None)
    hint = f" The closest line to its first one is line {near}: {lines[near - 1]!r}." if near else ""
    return (
        "the SEARCH text does not occur in the parent's version of the file; copy the current lines "
        f"exactly (indentation and whitespace included).{hint}"
    )


def _apply_diff(patch: ParsedPatch, root: Path) -> None:
    text = patch.text if patch.text.endswith("\n") else patch.text + "\n"
    with tempfile.NamedTemporaryFile("w", suffix=".patch", delete=False) as handle:
        handle.write(text)
    try:
        if shutil.which("git"):
            # A ceiling at root's parent: git never takes an enclosing repository for this folder.
            env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(root.parent)}
            argv = ["git", "apply", "--whitespace=nowarn", f"-p{patch.strip}", handle.name]
            try:
                _run(argv, root, env)
            except PatchError:  # models often get hunk line counts wrong: recount them
                _run([*argv[:2], "--recount", *argv[2:]], root, env)
        elif shutil.which("patch"):
            base = ["patch", f"-p{patch.strip}", "--batch", "--forward", "--silent", "-i", handle.name]
            _run([*base, "--dry-run"], root, None)
            _run(base, root, None)
        else:
            raise PatchError("neither git nor patch is installed to apply a unified diff: use search/replace blocks")
    finally:
        os.unlink(handle.name)


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None) -> None:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().replace(_patch_file(argv), "<patch>")
        raise PatchError(
            f"the unified diff does not apply to the parent's files: {detail[:1500]}. Rewrite it against the "
            "current file contents (shown in the prompt), or use search/replace blocks."
        )


def _patch_file(argv: list[str]) -> str:
    """The temporary patch file's path in `argv` (replaced in messages: it means nothing to a model)."""
    return next(arg for arg in reversed(argv) if arg.endswith(".patch"))
