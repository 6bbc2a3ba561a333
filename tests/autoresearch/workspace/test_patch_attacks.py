"""Patch attacks: a patch may change only real copies of the editable files, never anything else.

Each case is a patch an adversarial (or confused) model could send; each must be refused with a
message the model can act on, and must leave the user's files and the fixed evaluation untouched.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from autoresearch.campaign import Campaign, Ledger, Proposal
from autoresearch.workspace import PatchError, Workspaces, parse_patch

TRAIN = "RATE = 1.0\nprint('loss:', RATE)\n"
EVALUATION = "def score(rate):\n    return (rate - 3.0) ** 2\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "model.py").write_text("DEPTH = 2\n")
    (root / "train.py").write_text(TRAIN)
    (root / "evaluation.py").write_text(EVALUATION)
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the project that no patch may write into."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "x.txt").write_text("untouched\n")
    return folder


def spaces(project: Path, home: Path, editable: list[str], name: str = "attack") -> Workspaces:
    campaign = Campaign.model_validate(
        {
            "name": name,
            "command": ["python", "train.py"],
            "cwd": str(project),
            "objective": {"metric": "loss", "mode": "min"},
            "code": {"editable": editable, "fixed": ["evaluation.py"]},
            "budget": {"max_trials": 4, "max_parallel": 1},
        },
        context={"base_dir": project},
    )
    return Workspaces(Ledger.open(campaign, home))


def block(path: str, search: str, replace: str) -> str:
    return f"{path}\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE\n"


def test_a_symlink_made_by_a_diff_is_refused(project: Path, outside: Path, tmp_path: Path) -> None:
    ws = spaces(project, tmp_path / "home", ["src"])
    diff = (
        "diff --git a/src/d b/src/d\nnew file mode 120000\nindex 0000000..1111111\n"
        f"--- /dev/null\n+++ b/src/d\n@@ -0,0 +1 @@\n+{outside}\n\\ No newline at end of file\n"
    )
    with pytest.raises(PatchError, match="symbolic link .*only change the text of regular files"):
        ws.check(diff, None)


def test_a_search_replace_through_a_symlink_never_writes_outside(project: Path, outside: Path, tmp_path: Path) -> None:
    (project / "src" / "d").symlink_to(outside)  # a link inside an editable folder
    ws = spaces(project, tmp_path / "home", ["src"])
    with pytest.raises(PatchError, match="src/d is a symbolic link in the workspace"):
        ws.check(block("src/d/x.txt", "untouched\n", "owned\n"), None)
    with pytest.raises(PatchError, match="src/d is a symbolic link"):
        ws.check(block("src/d/new.txt", "", "owned\n"), None)
    assert (outside / "x.txt").read_text() == "untouched\n" and sorted(os.listdir(outside)) == ["x.txt"]


def test_editable_dot_is_a_real_copy_not_links_into_the_cwd(project: Path, tmp_path: Path) -> None:
    ws = spaces(project, tmp_path / "home", ["."])
    ledger = ws.ledger
    number = ledger.admit(Proposal(patch=block("train.py", "RATE = 1.0\n", "RATE = 2.0\n"))).trial_number

    path = ws.prepare(number)

    assert (path / "train.py").read_text().startswith("RATE = 2.0")
    assert (project / "train.py").read_text() == TRAIN  # the user's file is untouched
    assert not (path / "train.py").is_symlink() and not (path / "src").is_symlink()
    assert (path / "evaluation.py").read_text() == EVALUATION
    with pytest.raises(PatchError, match="evaluation.py, which is fixed"):
        ws.check(block("evaluation.py", "    return (rate - 3.0) ** 2\n", "    return -1000\n"), None)
    assert "evaluation.py" not in ws.files(None) and "train.py" in ws.files(None)


def test_a_git_binary_patch_is_refused(project: Path, tmp_path: Path) -> None:
    ws = spaces(project, tmp_path / "home", ["train.py"])
    diff = (
        "diff --git a/evaluation.py b/evaluation.py\nindex 1111111..2222222 100644\n"
        "GIT binary patch\nliteral 30\nlc$@Ns%}PqGQ5Tq^Qo&*S~kJ0BOj7aNFl(000\n\nliteral 0\nHcmV?d00001\n"
    )
    with pytest.raises(PatchError, match="binary hunk"):
        ws.check(diff, None)
    with pytest.raises(PatchError, match="binary hunk"):
        parse_patch("diff --git a/x.bin b/x.bin\nBinary files a/x.bin and b/x.bin differ\n--- a/x\n+++ b/x\n")
    assert (project / "evaluation.py").read_text() == EVALUATION


def test_a_mode_change_is_refused(project: Path, tmp_path: Path) -> None:
    ws = spaces(project, tmp_path / "home", ["train.py"])
    diff = "diff --git a/evaluation.py b/evaluation.py\nold mode 100644\nnew mode 100755\n"
    with pytest.raises(PatchError, match="changes a file's mode"):
        ws.check(diff, None)


def test_a_c_quoted_path_is_unquoted_before_the_fixed_check(project: Path, tmp_path: Path) -> None:
    ws = spaces(project, tmp_path / "home", ["."])
    diff = (
        'diff --git "a/evalu\\141tion.py" "b/evalu\\141tion.py"\n'
        '--- "a/evalu\\141tion.py"\n+++ "b/evalu\\141tion.py"\n'
        "@@ -1,2 +1,2 @@\n def score(rate):\n-    return (rate - 3.0) ** 2\n+    return -1000\n"
    )
    assert parse_patch(diff).files == ["evaluation.py"]
    with pytest.raises(PatchError, match="evaluation.py, which is fixed"):
        ws.check(diff, None)


def test_a_rename_onto_a_fixed_file_is_refused(project: Path, tmp_path: Path) -> None:
    ws = spaces(project, tmp_path / "home", ["."])
    diff = (
        "diff --git a/train.py b/evaluation.py\nsimilarity index 90%\nrename from train.py\nrename to evaluation.py\n"
        "--- a/train.py\n+++ b/evaluation.py\n@@ -1 +1 @@\n-RATE = 1.0\n+RATE = 3.0\n"
    )
    with pytest.raises(PatchError, match="evaluation.py, which is fixed"):
        ws.check(diff, None)


def test_fixed_files_come_from_the_original_even_inside_an_editable_folder(project: Path, tmp_path: Path) -> None:
    ws = spaces(project, tmp_path / "home", ["."])
    parent = ws.ledger.admit(Proposal(patch=block("train.py", "RATE = 1.0\n", "RATE = 2.0\n"))).trial_number
    ws.prepare(parent)
    (ws.path(parent) / "evaluation.py").write_text("def score(rate):\n    return -1000\n")  # a tampered parent
    child = ws.ledger.admit(
        Proposal(patch=block("train.py", "RATE = 2.0\n", "RATE = 2.5\n"), parent_trial=parent)
    ).trial_number

    path = ws.prepare(child)

    assert (path / "evaluation.py").read_text() == EVALUATION
    assert (path / "train.py").read_text().startswith("RATE = 2.5")


def test_an_editable_symlink_shows_no_contents_and_cannot_be_patched(project: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2\n")
    (project / "src" / "model.py").unlink()
    (project / "src" / "model.py").symlink_to(secret)
    ws = spaces(project, tmp_path / "home", ["src"])

    shown = ws.files(None)

    assert "hunter2" not in shown["src/model.py"] and "symbolic link" in shown["src/model.py"]
    with pytest.raises(PatchError, match="src/model.py is a symbolic link"):
        ws.check(block("src/model.py", "TOKEN=hunter2\n", "TOKEN=x\n"), None)
    assert secret.read_text() == "TOKEN=hunter2\n"


def test_paths_outside_editable_are_refused(project: Path, tmp_path: Path) -> None:
    ws = spaces(project, tmp_path / "home", ["src"])
    with pytest.raises(PatchError, match="train.py, which is not editable. Change only: src"):
        ws.check("--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-RATE = 1.0\n+RATE = 9.0\n", None)
    with pytest.raises(PatchError, match="without '..'"):
        ws.check(block("src/../train.py", "RATE = 1.0\n", "RATE = 9.0\n"), None)


def test_editable_dot_with_the_home_inside_the_cwd_does_not_copy_the_home(project: Path) -> None:
    ws = spaces(project, project / ".arhome", ["."])
    number = ws.ledger.admit(Proposal(patch=block("train.py", "RATE = 1.0\n", "RATE = 2.0\n"))).trial_number

    path = ws.prepare(number)

    assert not (path / ".arhome").exists() and (path / "src" / "model.py").is_file()
