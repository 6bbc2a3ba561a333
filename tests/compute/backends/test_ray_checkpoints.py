"""A staged attempt's checkpoint directory in a `file://` store (compute/backends/ray_checkpoints.py):
what a restore on another node gets is the newest complete version, as the folder stood."""

from __future__ import annotations

from pathlib import Path

from compute.backends.ray_checkpoints import LATEST, CheckpointKeeper, restore
from compute.storage import resolve_storage


def test_each_change_is_a_new_complete_version_and_a_restore_gets_the_newest(tmp_path: Path) -> None:
    store = resolve_storage(f"file://{tmp_path}/store", tmp_path)
    folder = tmp_path / "ckpt"
    folder.mkdir()
    keeper = CheckpointKeeper(store, "checkpoints/job-1", str(folder), tmp_path / "scratch", tmp_path / "log")
    assert not keeper.save() and not restore(store, "checkpoints/job-1", str(tmp_path / "none"))  # nothing yet
    (folder / "step").write_text("1")
    (folder / "old.pt").write_text("weights 1")
    assert keeper.save() and not keeper.save()  # saved once; unchanged since
    (folder / "step").write_text("2")
    (folder / "old.pt").unlink()
    assert keeper.save()
    elsewhere = tmp_path / "elsewhere"
    assert restore(store, "checkpoints/job-1", str(elsewhere))
    assert sorted(p.name for p in elsewhere.iterdir()) == ["step"] and (elsewhere / "step").read_text() == "2"
    kept = tmp_path / "store" / "checkpoints" / "job-1"
    assert sorted(p.name for p in kept.iterdir()) == sorted([LATEST, (kept / LATEST).read_text()])  # older ones gone
    assert not list((tmp_path / "scratch").iterdir())  # no snapshot left behind here


def test_a_save_that_fails_is_one_line_in_the_attempts_log(tmp_path: Path) -> None:
    (tmp_path / "store").write_text("a file where the store's folder should be")
    store = resolve_storage(f"file://{tmp_path}/store", tmp_path)
    folder = tmp_path / "ckpt"
    folder.mkdir()
    log = tmp_path / "attempt.log"
    keeper = CheckpointKeeper(store, "checkpoints/job-1", str(folder), tmp_path / "scratch", log)
    (folder / "step").write_text("1")
    assert not keeper.save() and not keeper.save()
    lines = log.read_text().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"[autoresearch] could not save {folder} to the storage file://")
