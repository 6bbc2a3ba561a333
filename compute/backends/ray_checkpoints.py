"""An attempt's checkpoint directory kept in a remote store while it runs (compute/storage.py).

With a remote store, `AR_CHECKPOINT_DIR` lives on the node that runs the attempt, and a node
that dies takes it along. So the node's agent keeps a copy in the store from the start of the
attempt on (`CheckpointKeeper`, one thread per attempt): every `SYNC_S` it lists the folder
(path, size, mtime of each file) and, when that changed since the last copy it kept, copies the
folder to a snapshot on this node; if the listing is still the same after the copy (no file was
written meanwhile; else it tries again at the next look), it uploads the snapshot as a new
version, `<place>/v<time>-<id>/`, then points `<place>/LATEST` at it (one small file, replaced
whole) and deletes the older versions. `restore` reads `LATEST`: the version it names was
complete before it was named, whatever a node that died in the middle of an upload left.
When the command has ended (a preempted job within its grace) the agent saves once more.

A job that writes a checkpoint file over several seconds should write it beside and rename it
(as torch and most trainers' savers can): a listing taken in a pause of the writer could
otherwise see a half-written file twice alike.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import uuid
from pathlib import Path

from compute.errors import ComputeError
from compute.storage import Storage

SYNC_S = 2.0
"""How often a running attempt's checkpoint directory is looked at (and, when it changed, saved)."""
LATEST = "LATEST"
"""In a job's checkpoint place: the name of its newest complete version."""

Listing = tuple[tuple[str, int, int], ...]


def listing(folder: str) -> Listing:
    """(relative path, size, mtime in ns) of every file under `folder`, sorted."""
    found = []
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            try:
                info = os.stat(path)
            except FileNotFoundError:  # removed meanwhile: the next listing says what is there
                continue
            found.append((os.path.relpath(path, folder), info.st_size, info.st_mtime_ns))
    return tuple(sorted(found))


def restore(storage: Storage, place: str, folder: str) -> bool:
    """Copy the newest complete version kept at `place` into `folder`; False when there is none."""
    version = (storage.read_text(f"{place}/{LATEST}") or "").strip()
    return bool(version) and storage.get_dir(f"{place}/{version}", folder)


class CheckpointKeeper:
    """Keeps one attempt's checkpoint directory in the store (see the module docstring)."""

    def __init__(self, storage: Storage, place: str, folder: str, scratch: Path, log: Path) -> None:
        self.storage = storage
        self.place = place
        self.folder = folder
        self._scratch = scratch
        """Where snapshots are copied on this node."""
        self._log = log
        """The attempt's log: a failed save is a line there (the first of a run of failures)."""
        self._kept = listing(folder) if os.path.isdir(folder) else ()
        """The listing of the folder as the store has it (what was restored counts as kept)."""
        self._failing = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._keep, name=f"checkpoints-{place}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def finish(self) -> None:
        """The command has ended: stop looking, and save what changed since the last version."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.save()

    def _keep(self) -> None:
        while not self._stop.wait(SYNC_S):
            self.save()

    def save(self) -> bool:
        """Upload the folder as a new version if it changed and held still while copied; whether it did."""
        try:
            saved = self._save()
        except (ComputeError, OSError) as err:  # OSError: the snapshot here (a file removed mid-copy ...)
            if not self._failing:
                with open(self._log, "ab") as out:
                    out.write(f"[autoresearch] could not save {self.folder} to the storage {self.storage.uri}: "
                              f"{err}\n".encode())
            self._failing = True
            return False
        self._failing = self._failing and not saved
        return saved

    def _save(self) -> bool:
        before = listing(self.folder) if os.path.isdir(self.folder) else ()
        if not before or before == self._kept:
            return False
        self._scratch.mkdir(parents=True, exist_ok=True)
        snapshot = tempfile.mkdtemp(prefix="checkpoint-", dir=self._scratch)
        try:
            shutil.copytree(self.folder, snapshot, dirs_exist_ok=True)
            if listing(self.folder) != before:  # written meanwhile: maybe half a file, try again later
                return False
            self._publish(snapshot)
        finally:
            shutil.rmtree(snapshot, ignore_errors=True)
        self._kept = before
        return True

    def _publish(self, snapshot: str) -> None:
        version = f"v{time.time_ns()}-{uuid.uuid4().hex[:6]}"
        self.storage.put_dir(snapshot, f"{self.place}/{version}")
        self.storage.write_text(f"{self.place}/{LATEST}", version)
        for old in self.storage.folders(self.place):
            if old != version:
                self.storage.delete_dir(f"{self.place}/{old}")
