"""A ledger that lost its state is refused, never started afresh.

- `check_not_lost`: the campaign ran before (its `ledger.started` marker, or the runner's
  `graph.db`, is there) but `optuna.db` is gone, empty, or holds no study of that name.
- `check_same_study`: `optuna.db` holds a study of that name, but not the one the marker names
  (the file was replaced by another campaign's, or recreated).
- `sqlite_errors`: an SQLite file that is not a database, or is malformed, is one `LedgerError`
  naming the file, not an SQLAlchemy traceback.
- `stored_config`: a config an older version stored and this one refuses (an int range past
  2**53, a NUL byte in env) is one `LedgerError`, not a ValidationError traceback.
- `checked_config`: the stored config as plain data, for a reader that only computes from it
  (`autoresearch status`), refused as `stored_config` refuses it. Validating a config loads the
  config models (pydantic: most of such a reader's start-up), so the verdict is kept: a config
  this code accepted is stamped (`CampaignPaths.config_checked`: the config itself and the
  size and mtime of every source file of ours loaded when it was judged) and not judged again
  while that config and those files are unchanged.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoresearch.campaign.errors import LedgerError
from autoresearch.campaign.ledger._optuna_internals import QUERIES
from autoresearch.campaign.paths import CampaignPaths, campaigns_root, known_campaigns
from compute.errors import corrupt_cause

if TYPE_CHECKING:  # imported where used: the dashboard's `LedgerReader` needs neither
    import optuna

    from autoresearch.campaign.config import Campaign



def _what_to_do(paths: CampaignPaths) -> str:
    return (f"Restore {paths.ledger_db.name} from a backup, or move the folder {paths.root} away to start the "
            f"campaign {paths.name!r} over (its old trials and checkpoints stay in the moved folder).")  # fmt: skip


def _has_study(path: Path, name: str) -> bool:
    """Whether the file holds the study; a corrupt file raises (see `sqlite_errors`)."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return db.execute(QUERIES["study"], (name,)).fetchone() is not None
    except sqlite3.DatabaseError as exc:
        if corrupt_cause(exc) is not None:
            raise
        return False


def check_not_lost(paths: CampaignPaths, name: str) -> None:
    """LedgerError when the campaign ran before but its ledger lost the study (see module doc)."""
    if not paths.ran_before():
        return
    path = paths.ledger_db
    with sqlite_errors(path):
        lost = not path.is_file() or path.stat().st_size == 0 or not _has_study(path, name)
    if lost:
        with sqlite_errors(path):
            _corrupt_check(path)
        state = "is missing" if not path.is_file() else "is empty" if path.stat().st_size == 0 else \
            f"holds no study {name!r}"  # fmt: skip
        raise LedgerError(
            f"the trial ledger {path} {state}, but campaign {name!r} ran before (see {paths.root}): it was "
            f"deleted, truncated or replaced, and starting afresh would forget its trials and reuse their "
            f"checkpoint folders. {_what_to_do(paths)}"
        )


def check_same_study(paths: CampaignPaths, name: str, started_at: str) -> None:
    """LedgerError when the study is not the one this folder's marker names; else write the marker."""
    marker = paths.ledger_marker
    if marker.is_file():
        known = marker.read_text().strip()
        if known and known != started_at:
            raise LedgerError(
                f"the trial ledger {paths.ledger_db} holds a study {name!r} started at {started_at}, but this "
                f"campaign started at {known} ({marker}): the file was replaced or recreated. {_what_to_do(paths)}"
            )
        return
    partial = marker.with_suffix(".tmp")
    partial.write_text(started_at + "\n")
    os.replace(partial, marker)


def _corrupt_check(path: Path) -> None:
    if path.is_file() and path.stat().st_size:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            db.execute("PRAGMA schema_version").fetchone()


@contextmanager
def sqlite_errors(path: Path) -> Iterator[None]:
    """Turn a corrupt file (SQLITE_CORRUPT, SQLITE_NOTADB) into a LedgerError, whether sqlite3 raised
    it or SQLAlchemy (its `orig`) or Optuna (StorageInternalError, caused by either) wraps it."""
    try:
        yield
    except Exception as exc:
        cause = corrupt_cause(exc)
        if cause is None:
            raise
        raise LedgerError(
            f"{path} is not a usable SQLite database ({cause}): the campaign's trial ledger is corrupt. "
            f"{_what_to_do(CampaignPaths(path.parent))}"
        ) from None


def load_attrs(name: str, storage: optuna.storages.BaseStorage, path: Path) -> dict[str, Any]:
    """The study's user attributes, or LedgerError when the file lost the study."""
    import optuna

    try:
        return optuna.load_study(study_name=name, storage=storage).user_attrs
    except KeyError:
        raise study_missing(name, path) from None


def study_missing(name: str, path: Path) -> LedgerError:
    """The error for a ledger file `path` without the study `name`."""
    if not CampaignPaths(path.parent).ran_before():
        return LedgerError(
            f"campaign {name!r} was never fully started: its first run was cut off while it made the "
            f"trial ledger {path}. Start it again with `autoresearch run CONFIG`."
        )
    return LedgerError(
        f"the trial ledger {path} holds no study {name!r}: it was truncated or replaced. "
        f"{_what_to_do(CampaignPaths(path.parent))}"
    )


def stored_config(raw: Any, name: str, path: Path) -> Campaign:
    """The config campaign `name` last ran with, as its ledger `path` stores it (stamped as accepted:
    `checked_config`)."""
    from pydantic import ValidationError

    from autoresearch.campaign.config import Campaign

    try:
        campaign = Campaign.model_validate(raw, context={"check_paths": False})
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
        raise LedgerError(
            f"campaign {name!r}: the config stored in {path} is refused now ({problems}); an older version "
            f"accepted it. Its trials stay readable (`optuna-dashboard {path}`); fix the config and run it "
            f"under a new name."
        ) from None
    stamp_config(raw, CampaignPaths(path.parent))
    return campaign


_PACKAGES = ("autoresearch", "compute", "tracking", "skills")
"""Our packages: the source files a stamp names are their modules'."""
_VALIDATOR = ("pydantic.version", "pydantic_core._pydantic_core")
"""The modules whose files name the validator's release (an upgrade of pydantic judges afresh)."""


def checked_config(raw: Mapping[str, Any], name: str, path: Path) -> Mapping[str, Any]:
    """The config campaign `name` last ran with, as its ledger `path` stores it, as plain data:
    `stored_config` judges it unless this code accepted it before (see the module doc)."""
    paths = CampaignPaths(path.parent)
    try:
        stamp = json.loads(paths.config_checked.read_text())
        fresh = stamp["config"] == _canonical(raw) and all(_file_state(f) == state for f, state in stamp["files"].items())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        fresh = False
    if not fresh:
        stored_config(raw, name, path)
    return raw


def stamp_config(raw: Mapping[str, Any], paths: CampaignPaths) -> None:
    """Record that this code accepts the config `raw` (the JSON a ledger stores), for `checked_config`:
    with the state of every source file of ours loaded now (those that judged it among them). Best
    effort: a folder this process may not write keeps no stamp (its readers judge the config)."""
    files = {}
    for module in list(sys.modules.values()):
        where = getattr(module, "__file__", None)
        name = getattr(module, "__name__", "")
        if where and (name.split(".")[0] in _PACKAGES or name in _VALIDATOR):
            files[where] = _file_state(where)
    partial = paths.config_checked.with_name(f"{paths.config_checked.name}.{os.getpid()}.tmp")
    try:
        partial.write_text(json.dumps({"config": _canonical(raw), "files": files}))
        os.replace(partial, paths.config_checked)
    except OSError:
        partial.unlink(missing_ok=True)


def _canonical(raw: Mapping[str, Any]) -> str:
    return json.dumps(raw, sort_keys=True)


def _file_state(path: str) -> list[int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def no_campaign(name: str, home: str | os.PathLike[str] | None) -> LedgerError:
    """The error for a campaign name without a ledger file."""
    known = [p.name for p in known_campaigns(home)]
    return LedgerError(
        f"no campaign named {name!r} in {campaigns_root(home)}; known campaigns: {', '.join(known) or 'none'}. "
        f"Start one with `autoresearch run campaign.yaml` (or set AUTORESEARCH_HOME)."
    )
