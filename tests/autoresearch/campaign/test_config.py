"""Campaign config: the issue's YAML loads as written; errors point at the line and field."""

from __future__ import annotations

from datetime import datetime, time, timedelta, UTC
from pathlib import Path

import pytest
from pydantic import ValidationError

from autoresearch.campaign import (
    Campaign,
    ConfigError,
    Mode,
    PolicyKind,
    PolicySettings,
    PrunerKind,
    SamplerKind,
    load_campaign,
    resolve_policy_kind,
)
from tests.autoresearch.campaign.conftest import ISSUE_YAML, make_campaign

REPO = Path(__file__).resolve().parents[3]


def test_issue_yaml_loads_as_written(issue_file: Path, project: Path) -> None:
    campaign = load_campaign(issue_file)

    assert campaign.name == "digits-mlp"
    assert campaign.cwd == (project / "examples" / "digits").resolve()
    assert campaign.cwd.is_absolute()
    assert campaign.objective.metric == "val_accuracy" and campaign.objective.mode is Mode.max
    assert campaign.objective.direction == "maximize"
    lr = campaign.search_space["lr"]
    assert (lr.type, lr.low, lr.high, lr.log) == ("float", 1e-4, 1e-1, True)
    hidden = campaign.search_space["hidden"]
    assert (hidden.type, hidden.low, hidden.high) == ("int", 16, 256)
    assert campaign.search_space["activation"].choices == ["relu", "tanh"]
    assert (campaign.budget.max_trials, campaign.budget.max_parallel) == (40, 4)
    assert (campaign.compute.gpus, campaign.compute.priority) == (1, 50)
    assert campaign.policy.kind is PolicyKind.auto
    assert (campaign.policy.sampler, campaign.policy.pruner.kind) == (SamplerKind.tpe, PrunerKind.median)
    assert campaign.experiment == "digits-mlp"
    assert campaign.render_command({"lr": 0.01, "hidden": 64, "activation": "tanh"}, 3) == [
        "python", "train.py", "--lr", "0.01", "--hidden", "64", "--activation", "tanh",
    ]


def test_repository_example_config_loads() -> None:
    example = REPO / "examples" / "digits" / "campaign.yaml"
    if not example.exists():
        pytest.skip("examples/digits/campaign.yaml is not in this checkout")
    campaign = load_campaign(example)
    assert campaign.cwd == example.parent.resolve()
    assert set(campaign.search_space) == {"lr", "hidden", "activation"}


def test_resolved_config_round_trips_through_json(issue_file: Path) -> None:
    campaign = load_campaign(issue_file)
    again = Campaign.model_validate(campaign.model_dump(mode="json"), context={"check_paths": False})
    assert again == campaign


def test_policy_auto_resolves_to_llm_only_with_provider_and_key() -> None:
    assert resolve_policy_kind(PolicySettings(), environ={"OPENAI_API_KEY": "sk-x"}) is PolicyKind.optuna
    with_provider = PolicySettings(provider="anthropic", model="claude-x")
    assert resolve_policy_kind(with_provider, environ={}) is PolicyKind.optuna
    assert resolve_policy_kind(with_provider, environ={"ANTHROPIC_API_KEY": ""}) is PolicyKind.optuna
    assert resolve_policy_kind(with_provider, environ={"ANTHROPIC_API_KEY": "k"}) is PolicyKind.llm
    custom = PolicySettings(provider="openai", api_key_env="MY_GATEWAY_KEY")
    assert resolve_policy_kind(custom, environ={"OPENAI_API_KEY": "k"}) is PolicyKind.optuna
    assert resolve_policy_kind(custom, environ={"MY_GATEWAY_KEY": "k"}) is PolicyKind.llm
    assert resolve_policy_kind(PolicySettings(kind="optuna", provider="openai"), environ={"OPENAI_API_KEY": "k"}) is PolicyKind.optuna


def test_yaml_12_scalars_deadlines_and_full_keys(project: Path) -> None:
    (project / "notes.md").write_text("Try wider layers first.")
    (project / "examples" / "digits" / "model.py").write_text("")
    text = ISSUE_YAML.replace("  max_parallel: 4\n", "  max_parallel: 4\n  deadline: 06:30\n  max_gpu_hours: 2\n")
    text = text.replace("low: 1.0e-4", "low: 1e-4")
    text += (
        "  sampler: random\n  pruner: successive_halving\n  seed: 3\n  provider: openai\n  model: gpt-x\n"
        "  instructions_file: notes.md\n"
        "tracking: {uri: 'http://127.0.0.1:5000', experiment: digits}\n"
        "code: {editable: [model.py]}\n"
        "confirm: {top_k: 2, seeds: 4, when: new_best}\n"
        "env: {OMP_NUM_THREADS: 1, DEBUG: true}\n"
        "objective2: no\n"
    )
    path = project / "full.yaml"
    path.write_text(text.replace("objective2: no\n", ""))
    campaign = load_campaign(path)
    assert campaign.search_space["lr"].low == 1e-4  # `1e-4` is a float (YAML 1.2), not a string
    assert campaign.budget.deadline == time(6, 30)  # `06:30` is not the sexagesimal int 390
    assert campaign.policy.instructions_file == (project / "notes.md").resolve()
    assert campaign.env == {"OMP_NUM_THREADS": "1", "DEBUG": "1"}
    assert campaign.code.editable == ["model.py"]
    assert (campaign.confirm.top_k, campaign.confirm.seeds, campaign.confirm.when.value) == (2, 4, "new_best")
    assert campaign.experiment == "digits"
    assert campaign.trial_seed(4) == 7

    started = datetime(2026, 11, 30, 22, 0).astimezone()
    deadline = campaign.budget.deadline_at(started)
    assert deadline > started and deadline - started < timedelta(days=1)
    assert (deadline.hour, deadline.minute) == (6, 30)


def test_iso_deadline(tmp_path: Path) -> None:
    campaign = make_campaign(tmp_path, budget={"max_trials": 3, "deadline": "2026-12-01T06:00:00+00:00"})
    assert campaign.budget.deadline_at(datetime.now(UTC)) == datetime(2026, 12, 1, 6, tzinfo=UTC)


def _error(project: Path, text: str) -> ConfigError:
    path = project / "campaign.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_campaign(path)
    return info.value


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    ("old", "new", "path", "expected"),
    [
        ("  max_parallel: 4", "  max_parallel: four", "budget.max_parallel", "valid integer"),
        ("  max_trials: 40", "  max_trails: 40", "budget.max_trails", "did you mean 'max_trials'?"),
        ("low: 1.0e-4, high: 1.0e-1", "low: 0.5, high: 0.1", "search_space.lr.high", "high (0.1) must be greater than low (0.5)"),
        ("low: 1.0e-4, high: 1.0e-1, log: true", "low: 0, high: 1, log: true", "search_space.lr.low", "log: true needs low > 0"),
        ("choices: [relu, tanh]", "choices: []", "search_space.activation.choices", "at least 1 item"),
        ("{type: int,", "{type: integer,", "search_space.hidden.type", "did you mean 'int'?"),
        ('"{hidden}"', '"{hiden}"', "command[5]", "unknown placeholder {hiden} (did you mean 'hidden'?)"),
        ('"{hidden}"', '"{hidden"', "command[5]", "expected '}'"),
        ("  priority: normal", "  priority: urgentest", "compute.priority", "unknown priority 'urgentest'"),
        ("  priority: normal", "  priority: 250", "compute.priority", "out of range"),
        ("  mode: max ", "  mode: maximum ", "objective.mode", "'max' or 'min'"),
        ("  kind: auto ", "  kind: llm ", "policy.kind", "needs `provider: openai`"),
        ("cwd: examples/digits", "cwd: examples/missing", "cwd", "is not a directory"),
        ("  gpus: 1", "  gpus: 1\n  gpu: 2", "compute.gpu", "did you mean 'gpus'?"),
        ("  gpus: 1", "  gpus: 1\n  launcher: mpirun", "compute.launcher", "'none' or 'torchrun'"),
        ("  gpus: 1", "  gpus: 1\n  nodes: 0", "compute.nodes", "greater than or equal to 1"),
    ],
)
def test_errors_point_at_line_and_field(project: Path, old: str, new: str, path: str, expected: str) -> None:
    assert old in ISSUE_YAML
    text = ISSUE_YAML.replace(old, new, 1)
    error = _error(project, text)

    problem = next(p for p in error.problems if p.path == path)
    assert expected in problem.message
    assert problem.line == _line_of(text, new.strip().splitlines()[-1])
    assert problem.file == str(project / "campaign.yaml")
    message = str(error)
    assert "\n" not in message and f"campaign.yaml:{problem.line}:" in message and path in message


def test_unknown_key_lists_allowed_keys_and_is_reported_once(project: Path) -> None:
    error = _error(project, ISSUE_YAML.replace("  max_trials: 40", "  max_trails: 40"))
    assert [p.path for p in error.problems] == ["budget.max_trails"]
    assert "allowed here: max_trials, max_parallel" in error.problems[0].message


def test_missing_key_points_at_parent(project: Path) -> None:
    text = ISSUE_YAML.replace("  mode: max                   # or min\n", "")
    problem = _error(project, text).problems[0]
    assert (problem.path, problem.line) == ("objective.mode", _line_of(text, "objective:"))
    assert "missing required key 'mode'" in problem.message


def test_duplicate_key_is_an_error(project: Path) -> None:
    text = ISSUE_YAML + "name: other\n"
    problem = _error(project, text).problems[0]
    assert problem.line == len(text.splitlines()) and "appears twice (first on line 1)" in problem.message


def test_yaml_syntax_error_has_line(project: Path) -> None:
    text = ISSUE_YAML.replace("  max_parallel: 4", "  max_parallel: [4")
    problem = _error(project, text).problems[0]
    assert "not valid YAML" in problem.message and problem.line is not None
    assert problem.line >= _line_of(text, "max_parallel")


def test_missing_file_and_non_mapping(project: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_campaign(project / "nope.yaml")
    assert "must be a YAML mapping" in str(_error(project, "- just\n- a list\n"))


def test_python_construction_checks_placeholders_too(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match=r"unknown placeholder \{z\}"):
        make_campaign(tmp_path, command=["python", "job.py", "{z}"])
    campaign = make_campaign(tmp_path, command=["run", "{x}", "{trial}", "{seed}", "{campaign}", "{{literal}}"])
    assert campaign.render_command({"x": 1.5, "y": 2, "kind": "a"}, 4) == ["run", "1.5", "4", "11", "toy", "{literal}"]


def test_reserved_and_code_only_campaigns(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="reserved for the built-in"):
        make_campaign(tmp_path, search_space={"trial": {"type": "int", "low": 0, "high": 2}}, command=["x"])
    with pytest.raises(ValidationError, match="nothing to search"):
        make_campaign(tmp_path, search_space={}, command=["x"])
    (tmp_path / "train.py").write_text("")
    code_only = make_campaign(tmp_path, search_space={}, command=["python", "train.py"], code={"editable": ["train.py"]})
    assert code_only.code.editable == ["train.py"]
    with pytest.raises(ValidationError, match="not found under cwd"):
        make_campaign(tmp_path, search_space={}, command=["x"], code={"editable": ["missing.py"]})
