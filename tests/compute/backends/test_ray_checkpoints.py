"""A staged attempt's checkpoint directory in a remote store (compute/backends/ray_checkpoints.py), a
`file://` folder and an S3 bucket (moto's server): what a restore on another node gets is the newest
complete version, as the folder stood."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from compute.backends.ray_checkpoints import LATEST, CheckpointKeeper, restore
from compute.storage import Storage, resolve_storage
from tests.compute.s3_server import S3Server


@pytest.fixture(params=["file", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Storage, Callable[[], list[str]]]:
    """A fresh store, and what lists every object in it (relative paths)."""
    if request.param == "file":
        root = tmp_path / "store"
        return (resolve_storage(f"file://{root}", tmp_path),
                lambda: sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()))
    s3: S3Server = request.getfixturevalue("s3")
    uri = s3.bucket()
    return resolve_storage(uri, tmp_path), lambda: s3.keys(uri)


def test_each_change_is_a_new_complete_version_and_a_restore_gets_the_newest(tmp_path: Path, store) -> None:
    store, objects = store
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
    latest = store.read_text(f"checkpoints/job-1/{LATEST}")
    assert objects() == [f"checkpoints/job-1/{LATEST}", f"checkpoints/job-1/{latest}/step"]  # older ones gone
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
