"""A tiny eval run end to end (real daemon, real subprocess jobs, real MLflow store), and the
robustness faults that need the most machinery, checked for a correct end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evals import Part, Suite, best_so_far
from evals.env import EvalEnv
from evals.records import Arm, FaultKind
from evals.report import markdown, save
from evals.robustness import run_case
from evals.run import Results, run_suite
from evals.tasks import REPO, synthetic

TINY = Suite(
    name="tiny",
    checkpoints=(3, 5),
    functions=("branin",),
    quality_seeds=2, quality_trials=6,
    stack_seeds=1, stack_trials=5, stack_slots=(1, 2),
    llm_seeds=1, llm_trials=4, llm_slots=2,
    wallclock_seeds=1, wallclock_targets={"branin": 200.0}, wallclock_max_trials=4, wallclock_step_s=0.01,
    pruning_seeds=1, pruning_trials=4, pruning_budgets=(2,),
    robustness_campaigns=1,
    latency_launches=2, latency_rounds=1,
    digits_seeds=1, digits_trials=1,
)  # fmt: skip
PARTS = (Part.quality, Part.stack, Part.llm, Part.wallclock)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Results, list[Path], Path]:
    out = tmp_path_factory.mktemp("evals-out")
    results = run_suite(TINY, out, parts=PARTS, command="test", progress=lambda line: None)
    return results, save(results, out), out


def test_a_tiny_suite_saves_json_table_and_plots(tiny_run):
    results, written, out = tiny_run
    assert [p.name for p in written] == ["results.json", "summary.md", "regret_vs_trials.png", "regret_vs_wallclock.png"]
    assert all(p.stat().st_size > 0 for p in written)
    loaded = Results.model_validate(json.loads((out / "results.json").read_text()))
    assert loaded.suite.name == "tiny" and len(loaded.runs) == len(results.runs)
    table = (out / "summary.md").read_text()
    assert table == markdown(results)
    assert "`tiny` suite" in table
    assert "| branin | quality | random | 1 | 2 |" in table
    assert "| branin | stack | stack-optuna | 2 | 1 |" in table
    assert "vs plain-tpe-jobs: @5:" in table
    assert "| branin (200.0) | plain-tpe-jobs | 4 | 1/1 |" in table


def test_each_arm_ran_every_trial_and_the_stack_reproduces_plain_tpe_at_one_slot(tiny_run):
    results, _, _ = tiny_run
    arms = {(r.part, r.arm) for r in results.runs}
    assert {("quality", Arm.random), ("quality", Arm.plain_tpe), ("stack", Arm.stack_optuna),
            ("stack", Arm.plain_tpe_jobs), ("llm", Arm.stack_llm), ("wallclock", Arm.stack_optuna)} <= arms
    for run in results.runs:
        if run.part in ("quality", "stack", "llm"):
            assert all(t.state == "complete" and t.value is not None for t in run.trials), run
    plain = next(r for r in results.runs if r.part == "stack" and r.arm is Arm.plain_tpe)
    stack = next(r for r in results.runs if r.arm is Arm.stack_optuna and r.slots == 1)
    assert [t.value for t in stack.trials] == pytest.approx([t.value for t in plain.trials], rel=1e-9)
    assert stack.busy_s > 0
    wall = [r for r in results.runs if r.part == "wallclock"]
    minimum = synthetic("branin").minimum
    assert all(best_so_far(r.values, minimum)[-1] <= 200.0 for r in wall)  # the loose target was reached


@pytest.mark.parametrize("fault", [FaultKind.worker_kill, FaultKind.runner_kill])
def test_a_campaign_under_a_fault_ends_correctly(fault, tmp_path):
    with EvalEnv(tmp_path) as env:
        case = run_case(env, fault, 0, trials=4)
    assert case.problems == [] and case.ok
    assert case.trials == 4
    if fault is FaultKind.worker_kill:
        assert case.faulted >= 1  # the first job's process was SIGKILLed


def test_the_cli_rejects_unknown_parts_and_a_provider_without_its_key():
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    bad = subprocess.run([sys.executable, "-m", "evals", "run", "--only", "quality,bogus"], cwd=REPO, env=env,
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 2 and "unknown part(s) ['bogus']" in bad.stderr
    nokey = subprocess.run([sys.executable, "-m", "evals", "run", "--llm", "anthropic:claude-x"], cwd=REPO, env=env,
                           capture_output=True, text=True)  # fmt: skip
    assert nokey.returncode == 2 and "set ANTHROPIC_API_KEY" in nokey.stderr


class _Interrupted(Exception):
    pass


def test_an_interrupted_run_keeps_each_measurement_and_resume_runs_only_the_missing_ones(tmp_path):
    from evals.report import load, save_json

    out = tmp_path / "out"

    def checkpoint_then_stop_after_three(results: Results) -> None:
        save_json(results, out)
        if len(results.runs) == 3:
            raise _Interrupted  # as if the machine went away after the third measurement

    with pytest.raises(_Interrupted):
        run_suite(TINY, out, parts=[Part.quality], progress=lambda line: None, checkpoint=checkpoint_then_stop_after_three)
    earlier = load(out)
    assert [(r.arm, r.seed) for r in earlier.runs] == [(Arm.random, 0), (Arm.plain_tpe, 0), (Arm.random, 1)]

    lines: list[str] = []
    resumed = run_suite(TINY, out, parts=[Part.quality], progress=lines.append, resume=earlier)
    assert resumed.runs[:3] == earlier.runs  # kept as measured, not re-run
    assert [(r.arm, r.seed) for r in resumed.runs[3:]] == [(Arm.plain_tpe, 1)]
    assert sum(" quality " in line and " seed " in line for line in lines) == 1
    assert any(note.startswith("resumed ") for note in resumed.notes)
    with pytest.raises(ValueError, match="suite 'tiny'"):
        run_suite(TINY.model_copy(update={"quality_seeds": 3}), out, parts=[Part.quality], resume=earlier)


def test_the_cli_refuses_to_resume_a_folder_without_results_or_of_another_suite(tmp_path):
    from evals.report import save_json

    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    empty = subprocess.run([sys.executable, "-m", "evals", "run", "--resume", str(tmp_path)], cwd=REPO, env=env,
                           capture_output=True, text=True)  # fmt: skip
    assert empty.returncode == 2 and "no results.json there" in empty.stderr
    save_json(Results(suite=TINY, parts=[Part.quality], llm="scripted", command="test", started="now"), tmp_path)
    other = subprocess.run([sys.executable, "-m", "evals", "run", "--suite", "quick", "--resume", str(tmp_path)],
                           cwd=REPO, env=env, capture_output=True, text=True)  # fmt: skip
    assert other.returncode == 2 and "that run is suite 'tiny'" in other.stderr


def test_the_llm_arm_uses_a_real_provider_only_when_its_key_is_set():
    from evals.__main__ import auto_llm

    assert auto_llm({}) == "scripted"
    assert auto_llm({"OPENAI_API_KEY": ""}) == "scripted"
    assert auto_llm({"OPENAI_API_KEY": "sk-x"}) == "openai:gpt-5-mini"
    assert auto_llm({"OPENAI_API_KEY": "sk-x", "ANTHROPIC_API_KEY": "sk-ant"}) == "anthropic:claude-sonnet-4-5"


@pytest.mark.slow
def test_the_latency_part_puts_the_stack_beside_its_peers_on_the_same_jobs(tmp_path):
    suite = TINY.model_copy(update={"latency_peer_trials": 6, "latency_peers": ("optuna",)})
    results = run_suite(suite, tmp_path, parts=[Part.latency], command="test", progress=lambda line: None)
    assert results.latency is not None
    rows = results.latency.peers
    assert [(r.arm, r.trials) for r in rows] == [("autoresearch", 6), ("optuna", 6)]
    assert all(r.wall_s > 0 and r.regret >= 0 and r.refill_gap_ms >= 0 for r in rows)
    table = markdown(results)
    assert "### Per-trial overhead beside peers (Hartmann6, 6 trials, seed 0, same jobs)" in table
    assert "| autoresearch | " in table and "| optuna | " in table and " | 1.00x | " in table
