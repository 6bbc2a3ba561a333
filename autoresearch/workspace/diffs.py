"""Reading a unified diff's file headers, and refusing what a code patch may not do.

A diff names its files in `diff --git`, `---`/`+++`, `rename`/`copy` lines; git C-quotes odd
names (`"evalu\\141tion.py"`), so every path is unquoted before it is checked. A diff may only
change the text of regular files: symlinks (`120000`), binary hunks (`GIT binary patch`,
`Binary files ... differ`), mode changes and submodules (`160000`) are refused, because each
would let a patch write somewhere the path rules never saw.
"""

from __future__ import annotations

import re

from autoresearch.workspace.errors import PatchError

_C_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", '"': '"', "\\": "\\"}
_MODE = re.compile(r"^(new file mode|deleted file mode|old mode|new mode|index [0-9a-f]+\.\.[0-9a-f]+) ?(\d*)\s*$")
_REGULAR = {"100644", "100755", "100664", ""}
_DIFF_GIT = re.compile(r'^diff --git ("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)\s*$')
_TEXT_ONLY = (
    "A patch may only change the text of regular files: write a text diff of the editable files "
    "(no symlinks, binary files, mode changes or submodules)."
)


def unquote(path: str) -> str:
    """A git path as written in a diff header, C-quoted or not, as the file name it means."""
    if len(path) < 2 or path[0] != '"' or path[-1] != '"':
        return path
    body, out, i = path[1:-1], bytearray(), 0
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 == len(body):
            out += ch.encode()
            i += 1
        elif body[i + 1] in "01234567" and re.match(r"[0-7]{3}", body[i + 1 : i + 4]):
            out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
            i += 4
        else:
            out += _C_ESCAPES.get(body[i + 1], body[i + 1]).encode()
            i += 2
    return out.decode("utf-8", errors="replace")


def header_path(field: str) -> str:
    """The path in a `---`/`+++` line's field (after the marker): tab-separated timestamp dropped, unquoted."""
    path = field.split("\t", 1)[0].strip()
    return unquote(path)


def refuse_non_text(lines: list[str]) -> None:
    """PatchError for a diff with a binary hunk, a symlink, a submodule or a mode change."""
    for n, line in enumerate(lines, start=1):
        if line.startswith("GIT binary patch") or (line.startswith("Binary files ") and line.rstrip().endswith("differ")):
            raise PatchError(f"the diff has a binary hunk (line {n}). {_TEXT_ONLY}")
        match = _MODE.match(line)
        if match is None:
            continue
        kind, mode = match.groups()
        if kind in ("old mode", "new mode"):
            raise PatchError(f"the diff changes a file's mode (line {n}: {line.strip()!r}). {_TEXT_ONLY}")
        if mode not in _REGULAR:
            what = {"120000": "a symbolic link", "160000": "a submodule"}.get(mode, f"a file of mode {mode}")
            raise PatchError(f"the diff makes or touches {what} (line {n}: {line.strip()!r}). {_TEXT_ONLY}")


def git_header_paths(line: str) -> list[str]:
    """The two paths of a `diff --git A B` line (with their a/ b/ prefixes), unquoted; [] if it does not parse."""
    match = _DIFF_GIT.match(line)
    if match is None:
        return []
    return [unquote(match.group(1)), unquote(match.group(2))]
