"""Per-trial workspaces: the parent's code plus the trial's patch, fixed files pristine, the rest linked."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoresearch.campaign import Ledger, Proposal
from autoresearch.workspace import PatchError, Workspaces, log_lineage
from tracking import MlflowTracker

from tests.autoresearch.conftest import rate_patch, toy_campaign


def test_workspace_chain_follows_the_parent(home: Path, toy_project: Path) -> None:
    ledger = Ledger.open(toy_campaign(toy_project), home)
    spaces = Workspaces(ledger)
    first = ledger.admit(Proposal(patch=rate_patch("1.0", "2.0"))).trial_number
    second = ledger.admit(Proposal(patch=rate_patch("2.0", "3.0"), parent_trial=first)).trial_number

    path = spaces.prepare(second)  # builds the parent's workspace first

    assert path == home / "campaigns" / "toy" / "workspaces" / f"trial-{second}"
    assert "RATE = 3.0" in (path / "train.py").read_text()
    assert "RATE = 2.0" in (spaces.path(first) / "train.py").read_text()
    assert "RATE = 1.0" in (toy_project / "train.py").read_text()  # the original is never touched
    assert not (path / "train.py").is_symlink() and not (path / "evaluation.py").is_symlink()
    assert (path / "data").is_symlink() and (path / "data" / "corpus.txt").read_text() == "hello\n"
    assert spaces.prepare(second) == path  # idempotent
    assert sorted(p.name for p in spaces.root.iterdir()) == [f"trial-{first}", f"trial-{second}"]


def test_fixed_files_come_from_the_cwd_and_bad_patches_are_refused(home: Path, toy_project: Path) -> None:
    ledger = Ledger.open(toy_campaign(toy_project), home)
    spaces = Workspaces(ledger)
    bad = ledger.admit(Proposal(patch=rate_patch("9.0", "3.0"))).trial_number
    with pytest.raises(PatchError, match="SEARCH text does not occur"):
        spaces.prepare(bad)
    assert not spaces.path(bad).exists() and list(spaces.root.iterdir()) == []  # nothing half-made

    with pytest.raises(PatchError, match="evaluation.py, which is fixed"):
        spaces.check("evaluation.py\n<<<<<<< SEARCH\n    return\n=======\n    return 0\n>>>>>>> REPLACE\n", None)
    with pytest.raises(PatchError, match="data/corpus.txt, which is not editable. Change only: train.py"):
        spaces.check("data/corpus.txt\n<<<<<<< SEARCH\nhello\n=======\nbye\n>>>>>>> REPLACE\n", None)
    assert spaces.check(rate_patch("1.0", "4.0"), None).files == ["train.py"]
    assert spaces.files(None) == {"train.py": (toy_project / "train.py").read_text()}


def test_lineage_goes_to_mlflow(home: Path, toy_project: Path, tracking) -> None:
    ledger = Ledger.open(toy_campaign(toy_project, name="toy-mlflow"), home)
    parent = ledger.admit(Proposal()).trial_number
    child = ledger.trial(ledger.admit(Proposal(patch=rate_patch("1.0", "2.0"), parent_trial=parent)).trial_number)
    tracker = MlflowTracker(tracking)
    client = tracker.client
    run = tracker.create_run(tracker.experiment("toy-mlflow"))

    log_lineage(tracker, run, child)

    tags = client.get_run(run).data.tags
    assert tags["autoresearch.parent_trial"] == str(parent) and "autoresearch.confirms" not in tags
    artifact = Path(client.download_artifacts(run, f"patch/trial-{child.number}.patch", str(home)))
    assert artifact.read_text() == child.patch
