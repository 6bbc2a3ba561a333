"""Robustness: campaigns through the full stack under one fault type each, checked afterwards
with `evals.checks.check_end`.

Every campaign runs Branin (5 steps of 0.05 s) with the Optuna policy, 4 trials at a time,
a per-attempt time limit (so a hung job is SIGKILLed after the grace period) and no retries.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict

from autoresearch.campaign import Campaign, Ledger, campaign_status
from autoresearch.runner import Start, run_campaign
from compute import Client, JobState
from evals.checks import CampaignSnapshot, JobEnd, TrialEnd, check_end
from evals.env import EvalEnv
from evals.records import FaultKind
from evals.stack import RUNNER
from evals.tasks import REPO, Task, synthetic
from tracking import CAMPAIGN_LABEL, TRIAL_LABEL

FAULT_ARGS = {
    FaultKind.crash: ("--fail-prob", "0.1"),
    FaultKind.hang: ("--hang-prob", "0.1"),
    FaultKind.nan: ("--nan-prob", "0.1"),
}
TIME_LIMIT_S = 6.0
"""Per-attempt limit: a healthy job takes about 0.3 s (longer on a loaded machine)."""
KILL_EVERY = 3
"""worker-kill: every third job of the campaign has its process SIGKILLed mid-run."""
CHILD_RUNNER = (
    "import sys; from autoresearch import api; from autoresearch.runner import RunnerSettings; "
    "api.run(sys.argv[1], settings=RunnerSettings(poll_s=0.1, heartbeat_s=1.0))"
)


class RobustnessCase(BaseModel):
    """One campaign under one fault."""

    model_config = ConfigDict(frozen=True, use_attribute_docstrings=True)

    fault: FaultKind
    index: int
    ok: bool
    """It ended correctly (no problems)."""
    problems: list[str]
    trials: int
    """Trials counted against the budget."""
    faulted: int
    """Trials that did not complete (failed, timed out, killed): how often the fault struck."""
    wall_s: float


def robustness_task() -> Task:
    return synthetic("branin", steps=5, step_seconds=0.05)


def run_case(env: EvalEnv, fault: FaultKind, index: int, trials: int, slots: int = 4) -> RobustnessCase:
    """One campaign of `trials` trials under `fault`, then the checks."""
    task = robustness_task().with_extra(*FAULT_ARGS.get(fault, ()))
    data = task.campaign_data(
        seed=1000 + index, trials=trials, slots=slots, tracking_uri=env.tracking_uri,
        policy={"kind": "optuna", "sampler": "tpe", "pruner": "none"}, time_limit_s=TIME_LIMIT_S,
        name=f"robust-{fault.value}-{index}-{os.urandom(3).hex()}",
    )  # fmt: skip
    campaign = Campaign.model_validate(data, context={"base_dir": task.cwd})
    started = time.monotonic()
    problems: list[str] = []
    try:
        if fault is FaultKind.runner_kill:
            _kill_runner_then_resume(env, data, campaign, random.Random(index))
        elif fault is FaultKind.worker_kill:
            stop = threading.Event()
            killer = threading.Thread(target=_kill_workers, args=(env.home, campaign.name, stop), daemon=True)
            killer.start()
            try:
                run_campaign(campaign, home=env.home, settings=RUNNER)
            finally:
                stop.set()
                killer.join(10)
        else:
            run_campaign(campaign, home=env.home, settings=RUNNER)
    except Exception as exc:  # noqa: BLE001 - a runner error is a robustness failure, recorded
        problems.append(f"the runner raised {type(exc).__name__}: {exc}")
    try:
        snap = snapshot(env, campaign)
    except Exception as exc:  # noqa: BLE001 - e.g. no ledger at all: recorded as the problem it is
        problems.append(f"cannot read the campaign afterwards: {type(exc).__name__}: {exc}")
        return RobustnessCase(fault=fault, index=index, ok=False, problems=problems, trials=0, faulted=0,
                              wall_s=time.monotonic() - started)  # fmt: skip
    problems += check_end(snap)
    counted = [t for t in snap.trials if t.state != "cancelled"]
    return RobustnessCase(
        fault=fault, index=index, ok=not problems, problems=problems, trials=len(counted),
        faulted=sum(t.state != "complete" for t in counted), wall_s=time.monotonic() - started,
    )  # fmt: skip


def snapshot(env: EvalEnv, campaign: Campaign) -> CampaignSnapshot:
    """The campaign's ledger, status and jobs (with each job's last printed value)."""
    assert env.client is not None
    ledger = Ledger.load(campaign.name, env.home)
    status = campaign_status(ledger)
    trials = [TrialEnd(number=t.number, state=t.state.value, value=t.value, job_id=t.job_id) for t in ledger.trials()]
    jobs = []
    for job in env.client.list(labels={CAMPAIGN_LABEL: campaign.name}, limit=10_000):
        label = job.spec.labels.get(TRIAL_LABEL)
        jobs.append(JobEnd(job_id=job.id, trial=int(label) if label else None, state=job.state.value,
                           last_value=_last_value(env.client.log_path(job.id), campaign.objective.metric)))  # fmt: skip
    return CampaignSnapshot(
        state=ledger.state.value, mode=campaign.objective.mode.value, max_trials=campaign.budget.max_trials,
        trials=trials, jobs=jobs, reported_best=status.best_trial.number if status.best_trial else None,
    )  # fmt: skip


def _last_value(log: Path, metric: str) -> float | None:
    if not log.exists():
        return None
    value = None
    for line in log.read_text(errors="replace").splitlines():
        key, _, rest = line.partition(":")
        if key.strip() == metric:
            try:
                value = float(rest)
            except ValueError:
                pass
    return value


def _kill_workers(home: Path, name: str, stop: threading.Event) -> None:
    """SIGKILL the job process (not the attempt's wrapper) of every KILL_EVERY-th job, mid-run."""
    client = Client(home, autostart=False)
    order: list[str] = []
    killed: set[str] = set()
    try:
        while not stop.is_set():
            for job in client.list(states=[JobState.running], labels={CAMPAIGN_LABEL: name}):
                if job.id not in order:
                    order.append(job.id)
                attempt = job.attempts[-1] if job.attempts else None
                due = order.index(job.id) % KILL_EVERY == 0 and job.id not in killed
                if due and attempt and attempt.pid and time.time() - attempt.started_at > 0.1:
                    for pid in _children(attempt.pid) or [attempt.pid]:
                        _sigkill(pid)
                    killed.add(job.id)
            stop.wait(0.05)
    finally:
        client.close()


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _sigkill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass


def _ended(client: Client, name: str) -> int:
    """Jobs of campaign `name` that ended. Asked of compute, so the drill never opens the ledger
    the child runner is creating (that raced on the Optuna schema before commit 1f12182)."""
    return sum(job.state.final for job in client.list(labels={CAMPAIGN_LABEL: name}, limit=10_000))


def _kill_runner_then_resume(env: EvalEnv, data: dict, campaign: Campaign, rng: random.Random) -> None:
    """Run the campaign in a child runner, SIGKILL it once two trials ended (plus a random
    delay), then resume it in this process."""
    config = env.home / "configs" / f"{campaign.name}.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    child_env = {**os.environ, "PYTHONPATH": str(REPO), "AUTORESEARCH_HOME": str(env.home)}
    child = subprocess.Popen([sys.executable, "-c", CHILD_RUNNER, str(config)], cwd=REPO, env=child_env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert env.client is not None
    deadline = time.monotonic() + 120
    while child.poll() is None and time.monotonic() < deadline:
        if _ended(env.client, campaign.name) >= 2:
            break
        time.sleep(0.1)
    time.sleep(rng.uniform(0.0, 0.5))
    if child.poll() is None:
        child.send_signal(signal.SIGKILL)
    _, err = child.communicate(timeout=60)
    if child.returncode not in (0, -signal.SIGKILL):
        errors = [line for line in err.splitlines() if "Error" in line] or err.splitlines()[-1:] or [""]
        raise RuntimeError(f"the child runner exited {child.returncode}: {errors[-1].strip()}")
    run_campaign(campaign, home=env.home, start=Start.resume, settings=RUNNER)
