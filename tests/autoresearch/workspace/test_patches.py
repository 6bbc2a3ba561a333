"""Patches: search/replace blocks and unified diffs (git apply), path rules, actionable errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoresearch.campaign import CodeSettings
from autoresearch.workspace import PatchError, PatchFormat, apply_patch, check_paths, parse_patch

CODE = CodeSettings(editable=["train.py", "model/"], fixed=["evaluation.py"])


def files(root: Path, **texts: str) -> Path:
    for name, text in texts.items():
        path = root / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_search_replace_blocks_apply_in_order(tmp_path: Path) -> None:
    root = files(tmp_path, train_py="a = 1\nb = 2\nc = 3\n")
    (tmp_path / "train_py").rename(tmp_path / "train.py")
    patch = parse_patch(
        "```\ntrain.py\n<<<<<<< SEARCH\na = 1\n=======\na = 10\n>>>>>>> REPLACE\n```\n"
        "<<<<<<< SEARCH\nc = 3\n=======\nc = 30\nd = 4\n>>>>>>> REPLACE\n"
    )
    assert patch.format is PatchFormat.search_replace and patch.files == ["train.py"]
    apply_patch(patch, root)
    assert (root / "train.py").read_text() == "a = 10\nb = 2\nc = 30\nd = 4\n"


def test_search_replace_errors_tell_the_model_what_to_fix(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("x = 1\nx = 1\n    lr = 0.1\n")
    with pytest.raises(PatchError, match="occurs 2 times; include more surrounding lines"):
        apply_patch(parse_patch("train.py\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n"), tmp_path)
    with pytest.raises(PatchError, match=r"does not occur .* closest line to its first one is line 3: '    lr = 0.1'"):
        apply_patch(parse_patch("train.py\n<<<<<<< SEARCH\nlr = 0.2\n=======\nlr = 0.3\n>>>>>>> REPLACE\n"), tmp_path)
    with pytest.raises(PatchError, match="has no file path"):
        parse_patch("<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n")
    with pytest.raises(PatchError, match="no '>>>>>>> REPLACE' line"):
        parse_patch("train.py\n<<<<<<< SEARCH\nx\n=======\ny\n")
    with pytest.raises(PatchError, match="neither search/replace blocks nor a unified diff"):
        parse_patch("please set lr to 0.3")
    assert (tmp_path / "train.py").read_text() == "x = 1\nx = 1\n    lr = 0.1\n"  # all or nothing


def test_search_replace_creates_a_file_with_an_empty_search(tmp_path: Path) -> None:
    apply_patch(parse_patch("model/extra.py\n<<<<<<< SEARCH\n=======\nK = 1\n>>>>>>> REPLACE\n"), tmp_path)
    assert (tmp_path / "model" / "extra.py").read_text() == "K = 1\n"


def test_unified_diff_applies_with_git_even_with_wrong_hunk_counts(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import os\n\nLR = 0.1\nSTEPS = 10\n")
    diff = (
        "--- a/train.py\n+++ b/train.py\n"
        "@@ -2,9 +2,9 @@\n \n-LR = 0.1\n+LR = 0.3\n STEPS = 10\n"  # counts are wrong on purpose
    )
    patch = parse_patch(diff)
    assert patch.format is PatchFormat.unified_diff and patch.files == ["train.py"] and patch.strip == 1
    apply_patch(patch, tmp_path)
    assert (tmp_path / "train.py").read_text() == "import os\n\nLR = 0.3\nSTEPS = 10\n"


def test_unified_diff_without_prefixes_and_a_new_file(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("LR = 0.1\n")
    diff = (
        "--- train.py\n+++ train.py\n@@ -1 +1 @@\n-LR = 0.1\n+LR = 0.5\n"
        "--- /dev/null\n+++ model/new.py\n@@ -0,0 +1 @@\n+N = 2\n"
    )
    patch = parse_patch(diff)
    assert patch.strip == 0 and patch.files == ["train.py", "model/new.py"]
    apply_patch(patch, tmp_path)
    assert (tmp_path / "train.py").read_text() == "LR = 0.5\n"
    assert (tmp_path / "model" / "new.py").read_text() == "N = 2\n"


def test_unified_diff_that_does_not_apply_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("LR = 0.1\n")
    patch = parse_patch("--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-LR = 0.9\n+LR = 0.5\n")
    with pytest.raises(PatchError, match=r"does not apply to the parent's files: .*train.py"):
        apply_patch(patch, tmp_path)
    assert (tmp_path / "train.py").read_text() == "LR = 0.1\n"


def test_paths_outside_editable_or_fixed_are_refused() -> None:
    check_paths(parse_patch("model/layers.py\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n"), CODE)
    fixed = parse_patch("--- a/evaluation.py\n+++ b/evaluation.py\n@@ -1 +1 @@\n-a\n+b\n")
    refusal = r"touches evaluation.py, which is fixed .* Change only the editable files: train.py, model/"
    with pytest.raises(PatchError, match=refusal):
        check_paths(fixed, CODE)
    with pytest.raises(PatchError, match="touches data.py, which is not editable"):
        check_paths(parse_patch("data.py\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"), CODE)
    with pytest.raises(PatchError, match="without '..'"):
        parse_patch("--- a/../etc/passwd\n+++ b/../etc/passwd\n@@ -1 +1 @@\n-a\n+b\n")
