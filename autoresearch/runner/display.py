"""What a person sees while a campaign runs: a live rich view on a terminal, plain log lines
otherwise (pipes, CI, log files), or nothing (`--quiet`)."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TextIO

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from autoresearch.campaign.holdout_stats import holdout_line
from autoresearch.campaign.states import CampaignState, TrialState
from autoresearch.campaign.status_core import hours_text

if TYPE_CHECKING:
    from autoresearch.campaign.status import CampaignStatus, TrialSummary


_SHOWN = 12
_ENDED = (CampaignState.completed.value, CampaignState.stopped.value, CampaignState.failed.value)
_FINAL = {s.value for s in TrialState if s.final}
_STYLE = {"complete": "green", "running": "cyan", "queued": "magenta", "proposed": "dim", "pruned": "yellow",
          "failed": "red", "cancelled": "dim"}  # fmt: skip


class Display(Protocol):
    """Receives the runner's events and, now and then, the campaign's status."""

    def event(self, text: str) -> None: ...

    def update(self, status: CampaignStatus, max_trials: int) -> None: ...

    def close(self) -> None: ...


class QuietDisplay:
    """Shows nothing."""

    def event(self, text: str) -> None:
        pass

    def update(self, status: CampaignStatus, max_trials: int) -> None:
        pass

    def close(self) -> None:
        pass


class PlainDisplay:
    """One line per event, plus a progress line at most every `every_s` seconds."""

    def __init__(self, stream: TextIO | None = None, every_s: float = 30.0) -> None:
        self.stream = stream or sys.stdout
        self.every_s = every_s
        self._last = 0.0

    def event(self, text: str) -> None:
        self.stream.write(f"{time.strftime('%H:%M:%S')} {text}\n")
        self.stream.flush()

    def update(self, status: CampaignStatus, max_trials: int) -> None:
        if time.monotonic() - self._last >= self.every_s:
            self._last = time.monotonic()
            self.event(summary_line(status, max_trials))

    def close(self) -> None:
        pass


class LiveDisplay:
    """A rich live view: budget used, best so far, running and pending trials, recent results."""

    def __init__(self, console: Console | None = None) -> None:
        from rich.live import Live  # here: `autoresearch status` draws its table without it

        self.console = console or Console()
        self._live = Live(Text("starting ..."), console=self.console, refresh_per_second=4, transient=False)
        self._live.start()

    def event(self, text: str) -> None:
        self._live.console.print(f"[dim]{time.strftime('%H:%M:%S')}[/] {text}", highlight=False)

    def update(self, status: CampaignStatus, max_trials: int) -> None:
        self._live.update(render_status(status, max_trials))

    def close(self) -> None:
        self._live.stop()


def summary_line(status: CampaignStatus | Mapping[str, Any], max_trials: int) -> str:
    """`name state | trials 12/40 (3 running, 1 pending) | best #7 0.973 | 1m20s, 0.13 slot-hours`
    (GPU-hours on physical GPUs; `2 running, 1 queued, ...` when a launched trial's job still waits in
    the compute queue; `pending`: proposed, not launched yet); a confirmed best reads
    `best #7 0.973 ± 0.004 (n=3), separable from #2: no`. `status`: the record, or its JSON (`status --json`)."""
    data = _data(status)
    counts = _counts(data)
    best = data["best_trial"]
    if best and (best["mean"] is not None or best["value"] is not None):
        best_text = f"best #{best['number']} {_mean(best)}"
        if data["separable"] is not None:
            best_text += f", separable from #{data['runner_up']}: {'yes' if data['separable'] else 'no'}"
    else:
        best_text = "no trial completed" if data["state"] in _ENDED else "no result yet"
    used = data["budget_used"]
    queued = sum(t["waiting_reason"] is not None for t in data["trials"])
    active = f"{counts['running'] - queued} running, " + (f"{queued} queued, " if queued else "")
    return (
        f"{data['name']} {data['state']} | trials {used['trials']}/{max_trials} "
        f"({active}{counts['proposed']} pending) | {best_text} | "
        f"{_duration(used['elapsed'])}, {hours_text(used['gpu_hours'], used['real_gpus'])}"
    )


def tracking_line(status: CampaignStatus | Mapping[str, Any]) -> str:
    """`tracking: 12 writes pending ...`: MLflow writes not applied yet, and who applies them."""
    data = _data(status)
    who = (f"writer pid {data['tracking_writer_pid']} is applying them" if data["tracking_writer_pid"]
           else f"no writer is running: `autoresearch resume {data['name']}` applies them first")  # fmt: skip
    return f"tracking: {data['tracking_pending']} writes pending ({who}); MLflow has every run once it is 0"


def render_status(
    status: CampaignStatus | Mapping[str, Any], max_trials: int,
    ranked: Sequence[TrialSummary | Mapping[str, Any]] | None = None, *, shown: int | None = None,
) -> Group:
    """The live view: a summary line and a table of active and recent trials, or of the `ranked`
    ones (complete trials, best first: `status --sort value`); `shown` rows at most (default 12).
    `status` and `ranked`: the records, or their JSON (`status --json`)."""
    data = _data(status)
    trials = data["trials"]
    limit = _SHOWN if shown is None else shown
    table = Table(show_edge=False, pad_edge=False, expand=False)
    for column in ("#", "state", "value", "params", "job", "run", "why"):
        table.add_column(column, justify="right" if column in ("#", "value") else "left")
    if ranked is None:
        active = [t for t in trials if t["state"] not in _FINAL]
        rows = [*[t for t in trials if t["state"] in _FINAL][-max(0, limit - len(active)) :], *active]
        rows = rows if shown is None else rows[-shown:]  # --top K: K rows, even with more trials running
        note = f"showing the latest {len(rows)} of {len(trials)} trials; `--json` lists them all"
    else:
        rows = [_data(t) for t in ranked[:limit]]
        note = (f"showing the best {len(rows)} of {len(trials)} trials by value (`--sort number`: the latest); "
                "`--json` lists them all")  # fmt: skip
    best = data["best_trial"]["number"] if data["best_trial"] else None
    for t in rows:
        value = "" if t["value"] is None else f"{t['value']:.6g}"
        if t["n"] is not None and t["n"] > 1:
            value += f" (mean {_mean(t)})"
        params = ", ".join(f"{k}={_short(v)}" for k, v in t["params"].items())
        mark = " *" if t["number"] == best else ""
        state = t["state"] if t["waiting_reason"] is None else "queued"
        style = _STYLE.get(state, "")
        why = f"{t['failure_class']}: {t['reason'] or ''}" if t["failure_class"] else (t["reason"] or t["waiting_reason"] or "")
        if t["suspect"]:
            why = f"suspect: {t['suspect_reason']}"
        elif t["suspect_rerun_of"] is not None:
            why = f"re-run of suspect trial {t['suspect_rerun_of']} on another node"
        if t["confirms"] is not None:
            why = f"confirms #{t['confirms']}" + (f"; {why}" if why else "")
        table.add_row(f"{t['number']}{mark}", Text(state, style=style), value, params, t["job_id"] or "",
                      t["mlflow_run_id"] or "", Text(why[:160]))  # fmt: skip
    parts: list[Text | Table] = [Text(summary_line(data, max_trials), style="bold")]
    if data["state_reason"] and data["state"] != CampaignState.running.value:
        parts.append(Text(f"{data['state']}: {data['state_reason']}"))
    if data["tracking_pending"]:
        parts.append(Text(tracking_line(data)))
    if data["holdout"] is not None:
        parts.append(Text(holdout_line(data["holdout"])))
    parts.append(table)
    if len(rows) < len(trials):
        parts.append(Text(note, style="dim"))
    return Group(*parts)


def _data(record: Any) -> Any:
    """A record's JSON (`model_dump(mode="json")`); JSON as it is."""
    return record.model_dump(mode="json") if hasattr(record, "model_dump") else record


def _mean(t: Mapping[str, Any]) -> str:
    """`0.973 ± 0.004 (n=3)`; the value alone for a trial with one run."""
    if t["n"] is None or t["n"] < 2 or t["mean"] is None:
        return f"{t['mean'] if t['mean'] is not None else t['value']:.6g}"
    spread = f" ± {t['sd']:.2g}" if t["sd"] is not None else ""
    return f"{t['mean']:.6g}{spread} (n={t['n']})"


def _counts(data: Mapping[str, Any]) -> dict[str, int]:
    counts = {state.value: 0 for state in TrialState}
    for t in data["trials"]:
        counts[t["state"]] += 1
    return counts


def _short(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def make_display(quiet: bool = False, stream: TextIO | None = None) -> Display:
    """Quiet, live (stdout is a terminal) or plain lines."""
    if quiet:
        return QuietDisplay()
    out = stream or sys.stdout
    if out.isatty():
        return LiveDisplay(Console(file=out))
    return PlainDisplay(out)
