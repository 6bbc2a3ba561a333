"""The example campaign configs load with the framework's loader and their commands run the jobs."""

from __future__ import annotations

import subprocess
import sys

import pytest

from autoresearch.campaign.loader import load_campaign
from examples.synthetic.functions import FUNCTIONS
from tests.examples._jobs import EXAMPLES, job_env, last_line

CONFIGS = {
    "digits/campaign.yaml": EXAMPLES / "digits",
    "synthetic/branin.yaml": EXAMPLES / "synthetic",
    "synthetic/hartmann6.yaml": EXAMPLES / "synthetic",
    "tinygpt/hyperparameters.yaml": EXAMPLES / "tinygpt",
    "tinygpt/code-edit.yaml": EXAMPLES / "tinygpt",
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_config_loads_and_runs_in_its_example_folder(name):
    campaign = load_campaign(EXAMPLES / name)
    assert campaign.cwd == CONFIGS[name]
    assert (campaign.cwd / campaign.command[1]).is_file()


def _rendered(name: str, params: dict) -> subprocess.CompletedProcess[str]:
    campaign = load_campaign(EXAMPLES / name)
    argv = campaign.render_command(params, trial_number=0)
    assert argv[0] == "python"
    return subprocess.run([sys.executable, *argv[1:]], cwd=campaign.cwd, env=job_env(),
                          capture_output=True, text=True, timeout=120)


def test_digits_config_command_reports_its_objective_last():
    result = _rendered("digits/campaign.yaml", {"lr": 0.01, "hidden": 32, "activation": "tanh"})
    assert result.returncode == 0, result.stderr
    key, value = last_line(result.stdout)
    assert key == load_campaign(EXAMPLES / "digits/campaign.yaml").objective.metric
    assert value > 0.9


@pytest.mark.parametrize("name", ["branin", "hartmann6"])
def test_synthetic_config_commands_report_the_function_value_last(name):
    fn = FUNCTIONS[name]
    campaign = load_campaign(EXAMPLES / f"synthetic/{name}.yaml")
    assert sorted(campaign.search_space) == [f"x{i}" for i in range(1, len(fn.bounds) + 1)]
    for i, (low, high) in enumerate(fn.bounds, start=1):
        space = campaign.search_space[f"x{i}"]
        assert (space.low, space.high) == (low, high)
    params = {f"x{i}": v for i, v in enumerate(fn.argmin[0], start=1)}
    result = _rendered(f"synthetic/{name}.yaml", params)
    assert result.returncode == 0, result.stderr
    key, value = last_line(result.stdout)
    assert key == campaign.objective.metric == "objective"
    assert value == pytest.approx(fn.minimum, abs=1e-5)


def test_code_edit_config_lets_the_policy_edit_train_py_only():
    campaign = load_campaign(EXAMPLES / "tinygpt/code-edit.yaml")
    assert campaign.code.editable == ["train.py"]
    assert campaign.code.fixed == ["evaluation.py"]
    assert campaign.policy.kind.value == "llm"
    assert campaign.objective.metric == "val_bpb" and campaign.objective.mode.value == "min"


def test_tinygpt_hyperparameter_config_command_reports_val_bpb_last():
    pytest.importorskip("torch")
    campaign = load_campaign(EXAMPLES / "tinygpt/hyperparameters.yaml")
    argv = campaign.render_command({"lr": 3e-3, "width": 64, "depth": 1, "batch_size": 16, "warmup": 10}, 0)
    # The config's 60 s budget, cut short: argparse keeps the last value of a repeated flag.
    result = subprocess.run([sys.executable, *argv[1:], "--time-budget", "2", "--device", "cpu"],
                            cwd=campaign.cwd, env=job_env(OMP_NUM_THREADS="1"), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert last_line(result.stdout)[0] == campaign.objective.metric == "val_bpb"
