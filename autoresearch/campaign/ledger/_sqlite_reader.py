"""`LedgerReader`: a campaign's ledger read straight from its SQLite file with plain sqlite3
(read-only), for readers that must answer quickly (the dashboard).

`Ledger.load(...).trials()` goes through Optuna's `RDBStorage` (an engine, a schema check, ORM
objects per row): about a second for 1k trials, after a second of importing Optuna and
SQLAlchemy. This reads the same rows with a handful of queries, imports neither, and builds the
same `TrialRecord`s through the ledger's one mapping (`record_fields`, which `trial_record` uses for
Optuna's `FrozenTrial`s).

The SQL it runs is what SQLAlchemy compiles for SQLite from Optuna's own table models (as
`_trial_writes.py` writes them), and each column is decoded as those models' types decode it
(`TrialState` names, `DATETIME` text, the value-type enums, distribution JSON): both live in
`_optuna_internals.py`, with the Optuna releases they were tested with. With another release, a
read is `Ledger.load`'s (Optuna's public API), the same snapshot, slower.

Rules:

- **Finished trials never change**: Optuna refuses every write to a trial that ended (and so
  does `_trial_writes.py`'s batch write). A reader keeps them and, on each `read`, fetches only the
  trials that are new or were unfinished last time: a read after one ledger write costs what
  changed, not what the ledger holds.
- **One snapshot per read**: all queries of a `read` run in one read transaction (WAL: never
  blocks the writer, never sees half a commit).
- **Same trials as a reader ledger**: a proposed trial whose parameters are not all committed yet
  is left out, as `Ledger.load(...).trials()` leaves it out (`half_drawn`).
- A campaign started over (its file replaced, or a study with another `started_at`) drops what
  was kept and is read afresh.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from autoresearch.campaign.ledger._optuna_internals import (
    QUERIES,
    external_value,
    internals_usable,
    stored_float,
    stored_time,
)
from autoresearch.campaign.ledger._integrity import (
    check_not_lost,
    checked_config,
    no_campaign,
    sqlite_errors,
    stored_config,
    study_missing,
)
from autoresearch.campaign.ledger._optuna_store import (
    CONFIG_ATTR,
    facts_from_attrs,
    half_drawn,
    record_fields,
    schema_lock,
    storage_url,
    stored_facts,
)
from autoresearch.campaign.paths import CampaignPaths
from autoresearch.campaign.views import ConfigView, FactsView, TrialView

if TYPE_CHECKING:
    from autoresearch.campaign.config import Campaign
    from autoresearch.campaign.ledger.facts import CampaignFacts
    from autoresearch.campaign.records import TrialRecord

@dataclass(frozen=True)
class LedgerSnapshot:
    """A campaign's ledger at one read: what `Ledger.load(name)` would answer at that moment."""

    campaign: Campaign
    """The config it last ran with (`Ledger.load(name).campaign`)."""
    facts: CampaignFacts
    trials: list[TrialRecord]
    """Every trial, as `Ledger.load(name).trials()` gives them."""
    paths: CampaignPaths
    storage_url: str
    """`sqlite:///...` of the ledger, for optuna-dashboard."""


@dataclass(frozen=True)
class LedgerViews:
    """A campaign's ledger at one read as plain views (`autoresearch.campaign.views`: no pydantic):
    what `LedgerSnapshot` holds, for a reader that only computes from it (`autoresearch status`)."""

    campaign: ConfigView
    facts: FactsView
    trials: list[TrialView]
    paths: CampaignPaths


class LedgerReader:
    """Reads one campaign's ledger with sqlite3, keeping its finished trials (see the module doc).
    Safe to share between threads (one read at a time). `views`: `read_views` gives plain views
    (no pydantic) instead of the records `read` gives."""

    def __init__(self, name: str, home: str | os.PathLike[str] | None = None, *, views: bool = False) -> None:
        self.paths = CampaignPaths.of(name, home)
        self.home = home
        self.views = views
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._inode = 0
        self._started: str | None = None
        self._finished: dict[int, Any] = {}
        """trial id -> the record (or view) of a trial that ended (it never changes)."""
        self._config: tuple[str, Any] | None = None
        self._decoders: dict[str, Callable[[float], Any]] = {}
        """A stored distribution's JSON -> how its stored values become parameter values."""

    def read(self) -> LedgerSnapshot:
        """The ledger now; LedgerError when there is none, or it is lost or corrupt."""
        assert not self.views, "a reader made with views=True gives read_views()"
        campaign, facts, trials = self._parts()
        return LedgerSnapshot(campaign=campaign, facts=facts, trials=trials, paths=self.paths,
                              storage_url=storage_url(self.paths.ledger_db))  # fmt: skip

    def read_views(self) -> LedgerViews:
        """The ledger now as plain views (a reader made with `views=True`); errors as `read`."""
        assert self.views, "a reader made with views=False gives read()"
        campaign, facts, trials = self._parts()
        return LedgerViews(campaign=campaign, facts=facts, trials=trials, paths=self.paths)

    def _parts(self) -> tuple[Any, Any, list[Any]]:
        """(config, facts, trials): records, or views with `self.views`."""
        path = self.paths.ledger_db
        with self._lock, sqlite_errors(path):
            try:
                inode = path.stat().st_ino
            except FileNotFoundError:
                self._reset()  # the folder was moved away: let go of the old file
                raise no_campaign(self.paths.name, self.home) from None
            if self._conn is None or inode != self._inode:
                self._reset()
                with schema_lock(self.paths.root, exclusive=False):  # `Ledger.open` may be creating it now
                    check_not_lost(self.paths, self.paths.name)
                    self._conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30,
                                                 isolation_level=None, check_same_thread=False)  # fmt: skip
                    self._inode = inode
            conn = self._conn
            conn.execute("BEGIN")
            try:
                return self._read(conn)
            finally:
                conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._reset()

    def _reset(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn, self._inode, self._started, self._finished, self._config = None, 0, None, {}, None

    def _read(self, conn: sqlite3.Connection) -> tuple[Any, Any, list[Any]]:
        name = self.paths.name
        if not internals_usable():  # the records: the status computation reads them as it reads views
            ledger = _public_load(self.paths, self.home)
            return ledger.campaign, ledger.facts(), ledger.trials()
        found = conn.execute(QUERIES["study"], (name,)).fetchall()
        if not found:
            raise study_missing(name, self.paths.ledger_db)
        study_id = found[0][0]
        raw = dict(conn.execute(QUERIES["study_attrs"], (study_id,)).fetchall())
        attrs = {key: json.loads(value) for key, value in raw.items()}
        if attrs.get("started_at") != self._started:  # a study made afresh under this name
            self._started, self._finished = attrs.get("started_at"), {}
        if CONFIG_ATTR not in raw:  # a study without its config: its first run was cut off while making it
            raise study_missing(name, self.paths.ledger_db)
        campaign = self._campaign(raw[CONFIG_ATTR])
        rows = conn.execute(QUERIES["trials"], (study_id,)).fetchall()
        fresh = self._records(conn, [r for r in rows if r[0] not in self._finished])
        self._finished.update({tid: record for tid, record in fresh.items() if record.state.final})
        space = campaign.search_space
        records = [self._finished.get(tid) or fresh[tid] for tid, *_ in rows]
        facts = FactsView(stored_facts(attrs)) if self.views else facts_from_attrs(attrs)
        return campaign, facts, [r for r in records if not half_drawn(r, space)]

    def _campaign(self, config_json: str) -> Any:
        if self._config is None or self._config[0] != config_json:
            raw, name, path = json.loads(config_json), self.paths.name, self.paths.ledger_db
            campaign = ConfigView(checked_config(raw, name, path)) if self.views else stored_config(raw, name, path)
            self._config = (config_json, campaign)
        return self._config[1]

    def _external(self, distribution_json: str) -> Callable[[float], Any]:
        if distribution_json not in self._decoders:
            self._decoders[distribution_json] = external_value(distribution_json)
        return self._decoders[distribution_json]

    def _records(self, conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> dict[int, Any]:
        """trial id -> the record (or view) of each trial of `rows` (trials table rows), from the same
        columns `RDBStorage._build_frozen_trial_from_trial_model` reads."""
        if not rows:
            return {}
        ids = json.dumps([row[0] for row in rows])
        values: dict[int, dict[int, float]] = {}
        for tid, objective, value, kind in conn.execute(QUERIES["values"], (ids,)):
            values.setdefault(tid, {})[objective] = stored_float(value, kind)
        params: dict[int, dict[str, Any]] = {}
        for tid, param, internal, text in conn.execute(QUERIES["params"], (ids,)):
            params.setdefault(tid, {})[param] = self._external(text)(internal)
        steps: dict[int, dict[int, float]] = {}
        for tid, step, value, kind in () if self.views else conn.execute(QUERIES["steps"], (ids,)):  # views: unread
            steps.setdefault(tid, {})[step] = stored_float(value, kind)
        user = _attrs(conn.execute(QUERIES["user_attrs"], (ids,)))
        system = _attrs(conn.execute(QUERIES["system_attrs"], (ids,)))
        make: Callable[[dict[str, Any]], Any] = TrialView
        if not self.views:
            from autoresearch.campaign.records import TrialRecord

            make = TrialRecord.model_validate
        return {
            tid: make(record_fields(
                number, state, params.get(tid, {}),
                [values[tid][o] for o in sorted(values[tid])] if tid in values else None,
                steps.get(tid, {}), user.get(tid, {}), system.get(tid, {}),
                stored_time(started), stored_time(completed),
            ))
            for tid, number, state, started, completed in rows
        }  # fmt: skip


def _attrs(rows: Iterable[tuple[Any, ...]]) -> dict[int, dict[str, Any]]:
    rows = list(rows)
    decoded = json.loads("[" + ",".join(value for _, _, value in rows) + "]")  # one parse, not one per attribute
    out: dict[int, dict[str, Any]] = {}
    for (tid, key, _), value in zip(rows, decoded):
        out.setdefault(tid, {})[key] = value
    return out


def _public_load(paths: CampaignPaths, home: str | os.PathLike[str] | None) -> Any:
    """The ledger through Optuna's public API (`Ledger.load`): an Optuna release whose tables this
    module's SQL was not tested with."""
    from autoresearch.campaign.ledger.optuna_ledger import Ledger

    return Ledger.load(paths.name, home)
