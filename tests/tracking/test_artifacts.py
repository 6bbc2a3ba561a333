"""Artifacts made from files (issue 30 item 5), on a real MLflow store through the outbox: a log
is read when its write is applied (not when the runner queues it), cut in the middle with a note
when it is too long, with credentials redacted; a missing log leaves a note; a diff of two folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracking import FileText, MlflowTracker, QueuedTracker, TrackingConfig, TreeDiff


def _artifact(tracker: MlflowTracker, run_id: str, path: str, folder: Path) -> str:
    return Path(tracker.client.download_artifacts(run_id, path, str(folder))).read_text()


def test_a_log_is_read_when_applied_capped_with_a_note_and_redacted(
    tracking: TrackingConfig, experiment_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AR_TEST_TOKEN", "hunter2-secret")
    inner = MlflowTracker(tracking)
    run_id = inner.create_run(inner.experiment(experiment_name))
    log = tmp_path / "attempt-1.log"
    tracker = QueuedTracker(inner, on_error=pytest.fail, max_hold_s=600.0)
    try:
        tracker.hold()  # the runner's refill: nothing is applied, and the log is not read yet
        tracker.log_artifact(run_id, FileText(source=str(log), max_bytes=1000, redact=["AR_TEST_TOKEN"]), "logs/a.log")
        tracker.log_artifact(run_id, FileText(source=str(tmp_path / "gone.log")), "logs/gone.log")
        log.write_text("H" * 300 + "token=hunter2-secret\n" + "x" * 2000 + "T" * 700 + "\n")  # written after queueing
        assert tracker.flush(60)
    finally:
        tracker.close()

    size = log.stat().st_size
    text = _artifact(inner, run_id, "logs/a.log", tmp_path / "out")
    assert text.startswith("H" * 250 + "\n[autoresearch: ")
    assert f"{size - 1000} of this log's {size} bytes cut here (artifacts keep 1000); the whole log: {log}]" in text
    assert text.endswith("x" * 49 + "T" * 700 + "\n")
    full = _artifact(inner, run_id, "logs/gone.log", tmp_path / "gone")
    assert full == f"[autoresearch: {tmp_path / 'gone.log'} did not exist when this artifact was written]\n"

    log.write_text("step 1\ntoken=hunter2-secret\n")
    inner.log_artifact(run_id, FileText(source=str(log), redact=["AR_TEST_TOKEN"]), "logs/short.log")
    assert _artifact(inner, run_id, "logs/short.log", tmp_path / "short") == "step 1\ntoken=[REDACTED]\n"


def test_a_tree_diff_shows_changed_added_and_binary_files(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    for root in (old, new):
        (root / "pkg" / "__pycache__").mkdir(parents=True)
        (root / "pkg" / "__pycache__" / "m.pyc").write_bytes(root.name.encode())  # caches are left out
        (root / "fixed.py").write_text("same\n")
    (old / "train.py").write_text("RATE = 1.0\nsteps = 3\n")
    (new / "train.py").write_text("RATE = 3.0\nsteps = 3\n")
    (new / "pkg" / "extra.py").write_text("added = True")
    (old / "pkg" / "w.bin").write_bytes(b"\xff\x00")
    (new / "pkg" / "w.bin").write_bytes(b"\xff\x01")

    diff = TreeDiff(old=str(old), new=str(new), paths=["train.py", "pkg", "fixed.py"]).render()

    assert "Binary files a/pkg/w.bin and b/pkg/w.bin differ\n" in diff
    added = "--- a/pkg/extra.py\n+++ b/pkg/extra.py\n@@ -0,0 +1 @@\n+added = True\n\\ No newline at end of file\n"
    assert added in diff
    assert "--- a/train.py\n+++ b/train.py\n@@ -1,2 +1,2 @@\n-RATE = 1.0\n+RATE = 3.0\n steps = 3\n" in diff
    assert "fixed.py" not in diff and "pycache" not in diff
