"""`autoresearch nightly CONFIG --duration S`: launches stop at the window's end, nothing is left
running, stopped trials are queued again (not failures), the next night continues the campaign
and its morning report diffs against the first; an unavailable LLM is retried, not fatal."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

from autoresearch.campaign import CampaignState, Ledger, TrialState, campaign_dir
from autoresearch.llm import LLMUnavailable
from autoresearch.nightly import Night, window_end, write_morning_report
from autoresearch.policy import OptunaPolicy
from autoresearch.runner import RunnerSettings, with_llm
from autoresearch.steering import NIGHTLY_PAUSE
from tests.autoresearch.chat.conftest import CLI, cli_env
from tests.autoresearch.runner.conftest import SYNTHETIC, campaign_jobs, synthetic_config, wait_until, write_config

PNG = b"\x89PNG\r\n\x1a\n"
FAST_NIGHT = RunnerSettings(poll_s=0.2, heartbeat_s=1.0)


def _active(client, name: str) -> list:  # type: ignore[no-untyped-def]
    return [j for j in campaign_jobs(client, name) if not j.state.final]


def _plots_ok(report: Path) -> list[str]:
    images = re.findall(r"\]\(([^)]+\.png)\)", report.read_text())
    for image in images:
        data = (report.parent / image).read_bytes()
        assert data.startswith(PNG) and len(data) > 2000, image
    return images


def test_a_night_stops_on_time_leaves_nothing_running_and_the_next_night_continues(compute_client, tracking, tmp_path):
    data = synthetic_config(tracking, steps=40, step_seconds=0.25, budget={"max_trials": 40, "max_parallel": 2})
    name = data["name"]
    config = write_config(tmp_path, data)
    done = subprocess.run([*CLI, "nightly", str(config), "--duration", "20", "--retry-s", "1"],
                          env=cli_env(compute_client.home), capture_output=True, text=True, timeout=240)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    until = datetime.fromisoformat(re.search(r"until (\S+ \S+),", done.stdout).group(1)).astimezone()
    report = Path(re.search(r"morning report: (\S+)", done.stdout).group(1))

    assert _active(compute_client, name) == []  # nothing pending or running
    ledger = Ledger.load(name)
    assert ledger.state is CampaignState.paused and ledger.state_reason.startswith(NIGHTLY_PAUSE)
    trials = ledger.trials()
    launched = [t.started_at for t in trials if t.started_at]
    assert launched and max(launched) <= until + timedelta(seconds=3), done.stdout  # launches stop at the window end
    assert all(j.priority == 25 for j in campaign_jobs(compute_client, name))  # low, preemptible
    assert not [t for t in trials if t.state is TrialState.failed]
    stopped = [t for t in trials if t.state is TrialState.cancelled]
    queued = [t for t in trials if t.state is TrialState.proposed]
    assert stopped and len(queued) == len(stopped), done.stdout  # each stopped trial waits for the next night
    assert {tuple(t.params.items()) for t in stopped} == {tuple(t.params.items()) for t in queued}

    text = report.read_text()
    assert f"## {name}" in text and "Compared with: nothing (first night)" in text
    assert "Quarantined nodes: none" in text and "queued for the next night" in text
    assert "gpu_hours.png" not in _plots_ok(report)  # its trials held no GPU slot: no empty chart, a line instead
    assert "No trial held a GPU slot tonight (0 slot-hours)" in text and "| slot-hours tonight |" in text

    second = Night([config], window_end(None, 8), settings=FAST_NIGHT, retry_s=1).run()
    assert _active(compute_client, name) == [] and second.jobs_left_running == 0
    assert second.campaigns[0].ran and second.campaigns[0].faults == []
    rerun = {t.number: t for t in Ledger.load(name).trials()}
    assert all(rerun[t.number].state is not TrialState.proposed or rerun[t.number].rationale.startswith("nightly")
               for t in queued)  # fmt: skip
    assert any(rerun[t.number].started_at for t in queued)  # last night's stopped trials ran first
    assert len(rerun) > len(trials)
    report2 = write_morning_report(second)
    assert f"Compared with: night {report.parent.name}" in report2.read_text()
    _plots_ok(report2)


class _DownOnce:
    """The LLM policy's stand-in: its provider is down on the first proposal."""

    def __init__(self, ledger: Ledger) -> None:
        self.inner, self.calls = OptunaPolicy(ledger), 0

    def propose(self, ctx, n):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == 1:
            raise LLMUnavailable("openai gpt-x: 503 after 3 attempts", status=503, attempts=3)
        return self.inner.propose(ctx, n)

    def replan(self, ctx):  # type: ignore[no-untyped-def]
        return self.inner.replan(ctx)


def test_an_llm_outage_is_retried_and_does_not_end_the_night(compute_client, tracking, tmp_path):
    down_once = with_llm(lambda campaign, ledger: _DownOnce(ledger))
    data = synthetic_config(tracking, budget={"max_trials": 2, "max_parallel": 2},
                            policy={"kind": "llm", "provider": "openai", "model": "gpt-x"})  # fmt: skip
    result = Night([write_config(tmp_path, data)], window_end(None, 60), settings=FAST_NIGHT, retry_s=0.5,
                   policy_factory=down_once).run()
    entry = result.campaigns[0]
    assert len(entry.faults) == 1 and "LLM provider is unavailable" in entry.faults[0]
    assert entry.final_state == "completed"  # retried within the window, then finished its budget
    assert [t.state for t in Ledger.load(data["name"]).trials()] == [TrialState.complete] * 2
    assert "fault (retried)" in write_morning_report(result).read_text()


def _printed(text: str, key: str) -> list[tuple[int, float]]:
    """(step, value) of every `step: N` line followed by `key: V` in a synthetic job's output."""
    pairs = re.findall(rf"^step: (\d+)\n{key}: (\S+)$", text, flags=re.M)
    return [(int(step), float(value)) for step, value in pairs]


def test_a_trial_stopped_at_the_window_end_resumes_from_its_checkpoint_the_next_night(
    compute_client, tracking, tmp_path
):  # fmt: skip
    steps = 150
    data = synthetic_config(tracking, steps=steps, step_seconds=0.1, extra=("--no-mlflow", "--seed", "{seed}"),
                            budget={"max_trials": 1, "max_parallel": 1})  # fmt: skip
    name = data["name"]
    config = write_config(tmp_path, data)
    first = Night([config], window_end(None, 10), settings=FAST_NIGHT, retry_s=1).run()
    assert first.jobs_left_running == 0 and first.campaigns[0].faults == []
    stopped, queued = Ledger.load(name).trials()
    assert (stopped.state, queued.state, queued.resume_of) == (TrialState.cancelled, TrialState.proposed, 0)
    folder = campaign_dir(name) / "checkpoints" / Ledger.load(name).identity / "trial-0"
    stopped_job = compute_client.get(stopped.job_id)
    assert stopped_job.checkpoint_dir == str(folder) and NIGHTLY_PAUSE in stopped_job.state_reason
    saved = json.loads((folder / "synthetic-checkpoint.json").read_text())["step"]
    assert 1 <= saved < steps, "the window must end while trial 0 runs"

    second = Night([config], window_end(None, 120), settings=FAST_NIGHT, retry_s=1).run()
    assert second.campaigns[0].final_state == "completed" and second.campaigns[0].faults == []
    resumed = Ledger.load(name).trial(queued.number)
    assert resumed.state is TrialState.complete
    job = compute_client.get(resumed.job_id)
    assert job.checkpoint_dir == str(folder) and job.spec.argv[-1] == "1"  # trial 0's folder and seed
    printed = _printed(compute_client.log_path(job.id).read_text(), "objective")
    assert printed[0][0] == saved + 1 > 1 and printed[-1][0] == steps  # it went on where trial 0 stopped

    whole = subprocess.run([sys.executable, "job.py", *job.spec.argv[2:], "--step-seconds", "0"],
                           cwd=SYNTHETIC, capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    uninterrupted = _printed(whole.stdout, "objective")
    assert len(uninterrupted) == steps
    assert printed == uninterrupted[saved:]  # the same values, step for step, as a run never stopped
    assert resumed.value == uninterrupted[-1][1]


def test_sigterm_ends_the_night_early_the_way_the_window_end_does(compute_client, tracking, tmp_path):
    data = synthetic_config(tracking, steps=400, step_seconds=0.1, extra=("--no-mlflow", "--seed", "{seed}"),
                            budget={"max_trials": 4, "max_parallel": 2})  # fmt: skip
    name = data["name"]
    config = write_config(tmp_path, data)
    night = subprocess.Popen([*CLI, "nightly", str(config), "--duration", "3600", "--retry-s", "1"],
                             env=cli_env(compute_client.home), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)  # fmt: skip
    try:
        wait_until(lambda: len([j for j in _active(compute_client, name) if j.state.value == "running"]) == 2,
                   timeout=120, what="two running trials")  # fmt: skip
        night.send_signal(signal.SIGTERM)
        out, _ = night.communicate(timeout=120)
    finally:
        if night.poll() is None:
            night.kill()
    assert night.returncode == 0, out
    assert "the window was cut short (SIGTERM at" in out and "morning report:" in out
    report = Path(re.search(r"morning report: (\S+)", out).group(1)).read_text()
    assert "(early: SIGTERM at" in report

    assert _active(compute_client, name) == []  # nothing left pending or running
    ledger = Ledger.load(name)
    assert ledger.state is CampaignState.paused and ledger.state_reason.startswith(NIGHTLY_PAUSE)
    trials = ledger.trials()
    stopped = [t for t in trials if t.state is TrialState.cancelled]
    queued = [t for t in trials if t.state is TrialState.proposed]
    assert len(stopped) == 2 and sorted(t.resume_of for t in queued) == sorted(t.number for t in stopped)
    for trial in stopped:  # each saved a checkpoint on its SIGTERM for the next night
        assert (ledger.checkpoint_dir(trial) / "synthetic-checkpoint.json").is_file()
