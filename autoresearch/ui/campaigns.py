"""What the Campaigns pages show: each ledger read straight from its SQLite file (`LedgerReader`:
plain sqlite3, read-only, the finished trials kept), and its status computed by the function
`autoresearch status` uses (`status_of`), so a page shows what `autoresearch status NAME` prints.
What a campaign page needs (the config models, the reader, `status_of`: neither Optuna nor
SQLAlchemy) is imported on the first campaign request, so the server starts without it."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autoresearch.ui.paging import Page, slice_page
from autoresearch.ui.trial_filter import TrialFilter
from compute.pidlock import holder_pid

if TYPE_CHECKING:
    from autoresearch.campaign import CampaignOverview, CampaignStatus, LedgerReader, LedgerSnapshot, TrialSummary
    from autoresearch.campaign.compare import Comparison
    from autoresearch.campaign.records import TrialRecord


class CampaignNotFound(ValueError):
    """No campaign of that name (or its ledger cannot be read); the message says what exists."""


TRIAL_COLUMNS = ("number", "state", "value", "job", "run", "failure")
"""What the trial table sorts by (`?sort=COLUMN&desc=1`), besides each parameter by its name."""


@dataclass(frozen=True)
class Curve:
    """The best-so-far chart: complete trials' values against the trial number, in SVG units."""

    width: int
    height: int
    dots: list[tuple[float, float, str]]
    """(x, y, title) of each complete trial's value."""
    line: str
    """The best-so-far step line, as SVG polyline points."""
    y_labels: list[tuple[float, str]]
    x_labels: list[tuple[float, str]]


@dataclass(frozen=True)
class CampaignView:
    status: CampaignStatus
    metric: str
    mode: str
    budget: dict[str, Any]
    runner_pid: int | None
    trials: Page[TrialSummary]
    wanted: TrialFilter
    """The table's filter (state, parameter ranges and choices); the charts follow it."""
    shown: int
    """How many trials pass the filter."""
    sort: str
    """The trial table's sort column (`TRIAL_COLUMNS` or a parameter name)."""
    desc: bool
    """Sorted in descending order."""
    param_names: list[str]
    """The search space's parameters (each a sortable column)."""
    search_space: dict[str, Any]
    """Parameter -> its search-space entry (the filter's fields: a range, or choices)."""
    curve: Curve | None
    experiment_url: str | None
    """The MLflow UI's runs table of the campaign's experiment (None: no experiment yet, or no UI for its store)."""
    run_urls: dict[str, str]
    """MLflow run id -> its MLflow UI page."""
    optuna_storage: str
    """The ledger's storage URL, for `optuna-dashboard`."""


class Ledgers:
    """The campaigns' ledgers and their status, kept while nothing about them changed.

    A read goes to the ledger's SQLite file (`LedgerReader`: after the first read of a campaign,
    only its new and unfinished trials are read again). Any write to a ledger (its SQLite file or
    WAL changes) or a change of its runner (the runner lock's holder) reads it again; a page
    fetched while nothing changed (live refreshes, pagination) reuses the last read."""

    def __init__(self, home: Path | None) -> None:
        self.home = home
        self._lock = threading.Lock()
        self._readers: dict[str, LedgerReader] = {}
        self._kept: dict[str, tuple[tuple[int, ...], LedgerSnapshot, CampaignStatus]] = {}

    def get(self, name: str) -> tuple[LedgerSnapshot, CampaignStatus]:
        """The ledger as last read and its status; raises CampaignNotFound."""
        from autoresearch.campaign import CampaignPaths, LedgerError, LedgerReader, status_of

        try:
            paths = CampaignPaths.of(name, self.home)
        except LedgerError as exc:  # not a campaign name (`../other-home/campaigns/c`)
            raise CampaignNotFound(str(exc)) from None
        db = paths.ledger_db
        stamp = (_stamp(db), _stamp(db.with_name(db.name + "-wal")), holder_pid(paths.lock) or 0)
        with self._lock:
            kept = self._kept.get(name)
            if kept is not None and kept[0] == stamp:
                return kept[1], kept[2]
            reader = self._readers.setdefault(name, LedgerReader(name, self.home))
            try:
                ledger = reader.read()
            except LedgerError as exc:
                raise CampaignNotFound(str(exc)) from None
            status = status_of(ledger.campaign, ledger.facts, ledger.trials, paths.root)
            self._kept[name] = (stamp, ledger, status)
            return ledger, status

    def close(self) -> None:
        with self._lock:
            for reader in self._readers.values():
                reader.close()
            self._readers.clear()


def _stamp(path: Path) -> int:
    try:
        stat = path.stat()
    except OSError:
        return 0
    return hash((stat.st_ino, stat.st_mtime_ns, stat.st_size))


def overview(ledgers: Ledgers) -> list[CampaignOverview]:
    """What `autoresearch status` lists (`overview` of each campaign)."""
    from autoresearch.campaign import known_campaigns, overview as line

    rows = []
    for paths in known_campaigns(ledgers.home):
        ledger, status = ledgers.get(paths.name)
        rows.append(line(ledger.campaign, status, paths))
    return rows


def campaign(
    ledgers: Ledgers, name: str, number: int, per_page: int, query: Any = None, sort: str = "number", desc: bool = False,
) -> CampaignView:  # fmt: skip
    """The page of campaign `name` with the trials its `query` filters (`trial_filter.parse_filter`).
    Raises CampaignNotFound, or ValueError for a bad filter or sort column."""
    from autoresearch.ui.trial_filter import parse_filter

    ledger, status = ledgers.get(name)
    wanted = parse_filter(query, ledger.campaign.search_space) if query else TrialFilter()
    params = list(ledger.campaign.search_space)
    if sort not in TRIAL_COLUMNS and sort not in params:
        raise ValueError(f"sort {sort!r}: use one of {', '.join([*TRIAL_COLUMNS, *params])}")
    return _view(ledger, status, ledgers.home, number, per_page, wanted, sort, desc)


def chart_trials(ledgers: Ledgers, name: str, query: Any) -> tuple[LedgerSnapshot, list[TrialRecord]]:
    """The ledger and the trials a chart of the campaign page draws: those its filter keeps, or
    the trials `?t=N&t=M` names (the compare page)."""
    from autoresearch.ui.trial_filter import parse_filter

    ledger, _ = ledgers.get(name)
    if query.getlist("t"):
        return ledger, pick(ledger.trials, query.getlist("t"))
    return ledger, parse_filter(query, ledger.campaign.search_space).apply(ledger.trials)


@dataclass(frozen=True)
class CompareView:
    """The compare page: `compare_trials`'s comparison of the chosen trials, with their patches."""

    name: str
    metric: str
    comparison: Comparison
    patches: dict[int, str]
    """Trial number -> its patch (code-edit trials), shown side by side."""
    query: str
    """`t=N&t=M...`: the chosen trials, for the curves' request."""


def compare_page(ledgers: Ledgers, name: str, numbers: list[str]) -> CompareView:
    """Raises CampaignNotFound, or ValueError when fewer than two known trials are named."""
    from urllib.parse import urlencode

    from autoresearch.campaign.compare import compare

    ledger, _ = ledgers.get(name)
    chosen = pick(ledger.trials, numbers)
    comparison = compare(chosen, ledger.campaign.objective)
    return CompareView(name=name, metric=ledger.campaign.objective.metric, comparison=comparison,
                       patches={t.number: t.patch for t in chosen if t.patch},
                       query=urlencode([("t", t.number) for t in chosen]))  # fmt: skip


def pick(trials: list[TrialRecord], numbers: list[str]) -> list[TrialRecord]:
    """The trials `numbers` names (text from a query), in that order; ValueError when one is not a
    trial number or fewer than two different trials are named (`compare.chosen` has the rules)."""
    from autoresearch.campaign.compare import chosen

    try:
        wanted = [int(n) for n in numbers]
    except ValueError:
        raise ValueError(f"t={numbers}: trial numbers (whole numbers), e.g. ?t=3&t=7") from None
    return chosen(trials, wanted)


def sort_trials(trials: list[TrialSummary], column: str, desc: bool) -> list[TrialSummary]:
    """Trials by `column` (`TRIAL_COLUMNS` or a parameter name), blanks last in either order."""
    cells: dict[str, Any] = {
        "number": lambda t: t.number, "state": lambda t: t.state.value, "value": lambda t: t.value,
        "job": lambda t: t.job_id, "run": lambda t: t.mlflow_run_id,
        "failure": lambda t: t.failure_class.value if t.failure_class else None,
    }  # fmt: skip
    cell = cells.get(column, lambda t: t.params.get(column))
    present = [t for t in trials if cell(t) is not None]
    blank = [t for t in trials if cell(t) is None]

    def key(t: TrialSummary) -> tuple[int, Any]:
        value = cell(t)
        return (0, value) if isinstance(value, int | float) and not isinstance(value, bool) else (1, str(value))

    return [*sorted(present, key=key, reverse=desc), *blank]


def _view(
    ledger: LedgerSnapshot,
    status: CampaignStatus,
    home: Path | None,
    number: int,
    per_page: int,
    wanted: TrialFilter,
    sort: str,
    desc: bool,
) -> CampaignView:
    from tracking import mlflow_ui_base, mlflow_ui_url, resolve_tracking

    config = ledger.campaign
    trials = wanted.apply(status.trials)
    trials = sort_trials(trials, sort, desc) if (sort, desc) != ("number", False) else trials
    base = mlflow_ui_base(resolve_tracking(config.tracking.uri, home).tracking_uri)
    experiment = ledger.facts.mlflow_experiment_id if base else None
    page = slice_page(trials, number, per_page)
    return CampaignView(
        status=status,
        metric=config.objective.metric,
        mode=config.objective.mode.value,
        budget=config.budget.model_dump(mode="json", exclude_none=True),
        runner_pid=holder_pid(ledger.paths.lock),
        trials=page,
        wanted=wanted,
        shown=len(trials),
        sort=sort,
        desc=desc,
        param_names=list(config.search_space),
        search_space=dict(config.search_space),
        curve=best_curve(status.trials, config.objective),
        experiment_url=mlflow_ui_url(base, experiment) if base and experiment else None,
        run_urls={t.mlflow_run_id: mlflow_ui_url(base, experiment, t.mlflow_run_id)
                  for t in page.items if base and experiment and t.mlflow_run_id},
        optuna_storage=ledger.storage_url,
    )  # fmt: skip


def best_curve(trials: list[TrialSummary], objective: Any, width: int = 640, height: int = 220) -> Curve | None:
    """The chart of complete trials by number, or None before two have completed."""
    from autoresearch.campaign.ranking import running_best

    done = [(t.number, float(t.value)) for t in trials if t.state.value == "complete" and t.value is not None]
    if len(done) < 2:
        return None
    best = running_best([v for _, v in done], objective)
    pad = 40
    lo_x, hi_x = done[0][0], max(done[-1][0], done[0][0] + 1)
    values = [v for _, v in done]
    lo_y, hi_y = min(values), max(values)
    if hi_y == lo_y:
        lo_y, hi_y = lo_y - 1.0, hi_y + 1.0

    def sx(x: float) -> float:
        return round(pad + (x - lo_x) / (hi_x - lo_x) * (width - 2 * pad), 1)

    def sy(y: float) -> float:
        return round(height - pad + (y - lo_y) / (hi_y - lo_y) * -(height - 2 * pad), 1)

    points: list[str] = []
    for (number, _), b in zip(done, best):
        if points:
            points.append(f"{sx(number)},{points[-1].split(',')[1]}")
        points.append(f"{sx(number)},{sy(b)}")
    return Curve(
        width=width,
        height=height,
        dots=[(sx(n), sy(v), f"trial {n}: {v:.6g}") for n, v in done],
        line=" ".join(points),
        y_labels=[(sy(y), f"{y:.4g}") for y in (lo_y, (lo_y + hi_y) / 2, hi_y)],
        x_labels=[(sx(x), str(x)) for x in sorted({lo_x, (lo_x + hi_x) // 2, hi_x})],
    )
