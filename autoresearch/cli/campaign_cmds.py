"""`autoresearch run | resume | report`: running campaigns and reporting on them (`status`: status_cmd.py)."""

from __future__ import annotations

import logging
import os
import signal
import io
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import click
from rich.markup import escape

import autoresearch.api as api
from autoresearch.campaign import CampaignState, ConfigError, LedgerError, load_campaign
from autoresearch.cli._common import console, err_console, fail, print_json, warn
from autoresearch.runner import Display, RunnerBusy, RunnerError, RunOutcome, make_display
from autoresearch.runner.display import tracking_line

quiet_option = click.option("--quiet", "-q", is_flag=True, help="No live view or progress lines; only the final summary.")
_EXIT = {CampaignState.completed: 0, CampaignState.stopped: 0, CampaignState.paused: 0, CampaignState.failed: 1}


cli = click.Group()


@cli.command("run")
@click.argument("config", type=click.Path(path_type=Path))
@click.option("--max-trials", type=int, help="Override budget.max_trials.")
@quiet_option
@click.option("--detach", is_flag=True, help="Run in the background (a new session; output to runner.log in the "
              "campaign's folder) and return at once with the campaign name and the runner's pid; follow it with "
              "`autoresearch status NAME`.")
@click.option("--json", "as_json", is_flag=True, help="With --detach: print {campaign, pid, log} as JSON.")
def run(config: Path, max_trials: int | None, quiet: bool, detach: bool, as_json: bool) -> None:
    """Run a campaign (CONFIG: its YAML file) until its budget or target ends it (continues it if it ran before, with the
    config as the file now says; what changed is shown)."""
    if detach:
        _detach(config, max_trials, as_json)
        return
    if as_json:
        fail("--json goes with --detach (it prints the detached runner's campaign, pid and log); a campaign run in "
             "the foreground prints a summary: read it afterwards with `autoresearch status NAME --json`")
    _quiet_libraries()

    def call(display: Display) -> RunOutcome:
        missing = load_campaign(config).missing_program()
        if missing is not None:
            warn(f"{config}: {missing} (every trial would fail)")
        return api.run(config, max_trials=max_trials, display=display)

    _run_guarded(call, quiet)


def _detach(config: Path, max_trials: int | None, as_json: bool) -> None:
    try:
        started = api.run_detached(config, max_trials=max_trials)
    except (ConfigError, RunnerError) as exc:
        fail(str(exc))
    if as_json:
        print_json({"campaign": started.campaign, "pid": started.pid, "log": str(started.log),
                    "running": started.exit_code is None})  # fmt: skip
        return
    if started.exit_code is None:
        text = (f"campaign {started.campaign}: runner pid {started.pid} in the background, output in {started.log}; "
                f"follow it with `autoresearch status {started.campaign}`")  # fmt: skip
    else:
        text = f"campaign {started.campaign}: the runner (pid {started.pid}) ended at once; see {started.log}"
    console.print(escape(text), highlight=False, soft_wrap=True)


@cli.command("resume")
@click.argument("name")
@quiet_option
def resume(name: str, quiet: bool) -> None:
    """Continue campaign NAME (killed, paused or stopped) with the config it last ran with
    (`autoresearch run CONFIG` continues it with an edited config file)."""
    _quiet_libraries()
    _run_guarded(lambda display: api.resume(name, display=display), quiet)


@cli.command("report")
@click.argument("name")
@click.option("--out", type=click.Path(path_type=Path), help="Output folder (default: the campaign dir/report).")
def report(name: str, out: Path | None) -> None:
    """Write campaign NAME's Markdown report with PNG plots and MLflow links, and report.html (interactive views)."""
    try:
        path = api.report(name, out)
    except LedgerError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write the report of {name!r} to {out}: {exc}; pass a writable folder with --out")
    console.print(f"report written to {escape(str(path))}", highlight=False, soft_wrap=True)
    page = path.parent / "report.html"
    if page.is_file():
        console.print(f"interactive views: {escape(str(page))}", highlight=False, soft_wrap=True)
    else:
        from autoresearch.report.figures import plotly_missing

        console.print(f"no report.html: {plotly_missing()}", highlight=False, soft_wrap=True)


def _run_guarded(call: Callable[[Display], RunOutcome], quiet: bool) -> None:
    """Run or resume with the CLI's error handling; exit with the outcome's code."""
    previous = signal.signal(signal.SIGTERM, _terminate)
    display = make_display(quiet)
    try:
        outcome = call(display)
    except (ConfigError, LedgerError, RunnerBusy, RunnerError) as exc:
        display.close()
        fail(str(exc))
    except KeyboardInterrupt:
        display.close()
        err_console.print(
            "interrupted: the runner stopped; trials already launched keep running in compute. "
            "Run the same command again (or `autoresearch resume NAME`) to continue.",
            highlight=False, soft_wrap=True,
        )  # fmt: skip
        raise click.exceptions.Exit(130) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    _print_outcome(outcome)
    raise click.exceptions.Exit(_EXIT.get(outcome.state, 0))


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _print_outcome(outcome: RunOutcome) -> None:
    best = outcome.status.best_trial
    if outcome.live_runner_pid is not None:
        text = f"{outcome.name}: {outcome.reason}."
    elif outcome.already_ended:
        text = f"campaign {outcome.name} is already {outcome.state.value}: {outcome.reason}"
    else:
        text = f"campaign {outcome.name} {outcome.state.value}: {outcome.reason}"
    console.print(escape(text), highlight=False, soft_wrap=True)
    if best is not None and best.value is not None:
        params = ", ".join(f"{k}={v}" for k, v in best.params.items())
        value = f"{best.value:.6g}" if best.n is None or best.n < 2 else f"{best.mean:.6g} ± {best.sd or 0:.2g} (n={best.n})"
        console.print(f"best: trial {best.number} value {value} ({escape(params)})", highlight=False)
    if outcome.tracking_pending:
        console.print(escape(tracking_line(outcome.status)), highlight=False, soft_wrap=True)
    if outcome.status.trials:
        console.print(
            f"next: `autoresearch status {outcome.name}`, `autoresearch report {outcome.name}`",
            highlight=False, soft_wrap=True,
        )  # fmt: skip


def _quiet_libraries() -> None:
    """MLflow and Alembic chatter (schema creation ...) would interleave with the display."""
    os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")  # mlflow sets its level when imported
    for name in ("mlflow", "alembic"):
        logging.getLogger(name).setLevel(logging.WARNING)
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)
