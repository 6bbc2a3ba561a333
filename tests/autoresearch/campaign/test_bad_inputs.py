"""A bad-input corpus for campaign configs: every case is refused with one clear error naming
what is wrong (exit 2 from `autoresearch config check FILE`, ConfigError from the API), never
a traceback, a hang or a silent coercion."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from autoresearch.campaign import ConfigError, load_campaign
from autoresearch.cli import _register, app

_register()
runner = CliRunner()

REPO = Path(__file__).resolve().parents[3]
GOOD = """\
name: corpus
command: ["python", "train.py", "--lr", "{lr}"]
objective: {metric: loss, mode: min}
search_space:
  lr: {type: float, low: 0.001, high: 0.1}
  depth: {type: int, low: 1, high: 8}
budget: {max_trials: 4, max_parallel: 2}
"""


def _replace(old: str, new: str) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        assert old in GOOD
        return _write(folder, GOOD.replace(old, new))

    return make


def _write(folder: Path, text: str | bytes) -> Path:
    file = folder / "campaign.yaml"
    file.write_bytes(text.encode() if isinstance(text, str) else text)
    return file


def _fifo(folder: Path) -> Path:
    os.mkfifo(folder / "campaign.yaml")
    return folder / "campaign.yaml"


def _loop(folder: Path) -> Path:
    (folder / "a.yaml").symlink_to(folder / "b.yaml")
    (folder / "b.yaml").symlink_to(folder / "a.yaml")
    return folder / "a.yaml"


def _cwd_loop(folder: Path) -> Path:
    (folder / "a").symlink_to(folder / "b")
    (folder / "b").symlink_to(folder / "a")
    return _write(folder, GOOD.replace("budget:", "cwd: a/x\nbudget:"))


def _laughs(folder: Path) -> Path:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return _write(folder, GOOD + "\n".join(lines).replace("a", "x_a") + "\n")


CASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "10k-deep flow nesting": (lambda d: _write(d, GOOD + "x: " + "[" * 10_000 + "]" * 10_000 + "\n"),
                              "nested more than 50 levels deep"),
    "deep block nesting": (lambda d: _write(d, GOOD + "".join(f"{'  ' * i}k{i}:\n" for i in range(200)) + "  " * 200 + "v\n"),
                           "nested more than 50 levels deep"),
    "billion laughs": (_laughs, "expands to more than 100000 values"),
    "recursive alias": (lambda d: _write(d, GOOD + "x: &r [*r]\n"), "levels (through aliases?)"),
    "a FIFO": (_fifo, "not a regular file (a device, FIFO or socket)"),
    "/dev/zero": (lambda d: Path("/dev/zero"), "not a regular file"),
    "a symlink loop": (_loop, "cannot open it: Too many levels of symbolic links"),
    "a folder": (lambda d: d, "it is a folder"),
    "over the size cap": (lambda d: _write(d, GOOD + "#" + "x" * (2 << 20) + "\n"), "over the 1048576-byte limit"),
    "not UTF-8": (lambda d: _write(d, GOOD.encode() + b"# \xff\xfe\n"), "not UTF-8"),
    "max_trials as a string": (_replace("max_trials: 4", 'max_trials: "5"'),
                               "budget.max_trials: must be a number, not the string '5'"),
    "max_trials as a boolean": (_replace("max_trials: 4", "max_trials: true"),
                                "budget.max_trials: must be a number, not the boolean true"),
    "max_parallel as a string": (_replace("max_parallel: 2", 'max_parallel: "2"'), "budget.max_parallel"),
    "gpus as a boolean": (_replace("budget:", "compute: {gpus: true}\nbudget:"),
                          "compute.gpus: must be a number, not the boolean true"),
    "priority as a boolean": (_replace("budget:", "compute: {priority: true}\nbudget:"),
                              "compute.priority: must be a number, not the boolean true"),
    "preemptible as a string": (_replace("budget:", 'compute: {preemptible: "yes"}\nbudget:'),
                                "compute.preemptible: must be true or false"),
    "progress_timeout_s zero": (_replace("budget:", "compute: {progress_timeout_s: 0}\nbudget:"),
                                "compute.progress_timeout_s: progress_timeout_s must be a positive number of seconds"),
    "progress_timeout_s as a string": (_replace("budget:", 'compute: {progress_timeout_s: "60"}\nbudget:'),
                                       "compute.progress_timeout_s: must be a number, not the string '60'"),
    "target NaN": (_replace("mode: min}", "mode: min, target: .nan}"), "objective.target"),
    "target infinite": (_replace("mode: min}", "mode: min, target: .inf}"), "objective.target"),
    "low as a string": (_replace("low: 0.001", 'low: "0.001"'), "search_space.lr.low: must be a number"),
    "float step wider than the range": (_replace("high: 0.1}", "high: 0.1, step: 0.5}"),
                                        "search_space.lr.step: step (0.5) is wider than the range"),
    "int step wider than the range": (_replace("high: 8}", "high: 8, step: 10}"),
                                      "search_space.depth.step: step (10) is wider than the range"),
    # issue 20 item 9: what used to fail inside the runner's graph, caught when the config is read
    "{x:d} on a float": (_replace('"{lr}"]', '"{lr:d}"]'), "command[3] '{lr:d}': cannot render with lr=0.001"),
    "a huge format width": (_replace('"{lr}"]', '"{lr:999999999}"]'), "asks for 999999999 characters"),
    "a placeholder in a format spec": (_replace('"{lr}"]', '"{lr:{depth}}"]'), "contains a placeholder"),
    "an env key with =": (_replace("budget:", "env: {A=B: x}\nbudget:"), "env.A=B: 'A=B' is not an environment variable name"),
    "an empty env key": (_replace("budget:", 'env: {"": x}\nbudget:'), "'' is not an environment variable name"),
    "a float range of +-1e308": (_replace("low: 0.001, high: 0.1", "low: -1.0e308, high: 1.0e308"),
                                 "search_space.lr.high: the range [-1e+308, 1e+308] is too wide"),
    "a tracking uri that is no store": (_replace("budget:", "tracking: {uri: not-a-store}\nbudget:"),
                                        "tracking.uri: tracking store 'not-a-store' is neither a URI nor a .db file"),
    "a tracking uri of an unknown scheme": (_replace("budget:", "tracking: {uri: 'nosuch://host'}\nbudget:"),
                                            "has the unknown scheme 'nosuch'"),
    # issue 29 item 2: the confirm: section, and the key it replaced
    "confirm.top_k 0": (_replace("budget:", "confirm: {top_k: 0}\nbudget:"),
                        "campaign.yaml:7:11: confirm.top_k: Input should be greater than or equal to 1 (got 0)"),
    "confirm.when sometimes": (_replace("budget:", "confirm: {when: sometimes}\nbudget:"),
                               "campaign.yaml:7:11: confirm.when: Input should be 'end' or 'new_best' (got 'sometimes')"),
    "confirm.seeds as a string": (_replace("budget:", 'confirm: {seeds: "2"}\nbudget:'),
                                  "confirm.seeds: must be a number, not the string '2'"),
    "the old code.noise_seeds": (_replace("budget:", "code: {editable: [train.py], noise_seeds: 2}\nbudget:"),
                                 "campaign.yaml:7:30: code.noise_seeds: code.noise_seeds was replaced by the confirm: "
                                 "section (one mechanism for every campaign): remove noise_seeds and write "
                                 "`confirm: {top_k: 3, seeds: 2, when: new_best}`"),
    # issue 33 item 8
    "an int range of +-1e30": (_replace("low: 1, high: 8", "low: -1000000000000000000000000000000, high: 1000000000000000000000000000000"),
                               "search_space.depth.low: -1000000000000000000000000000000 is too large: an int "
                               "parameter's bounds must lie within +-2**53"),
    "an int bound past 2**53": (_replace("high: 8}", "high: 9007199254740993}"), "search_space.depth.high: 9007199254740993 is too large"),
    "an int bound as a float": (_replace("high: 8}", "high: 1.0e30}"), "search_space.depth.high: must be an integer, not the float 1e+30"),
    "an int step as a float": (_replace("high: 8}", "high: 8, step: 2.0}"), "search_space.depth.step: must be an integer, not the float 2.0"),
    "a NUL byte in env": (_replace("budget:", 'env: {A: "x\\0y"}\nbudget:'), "env.A: 'x\\x00y' contains a NUL byte"),
    "a NUL byte in command": (_replace('"{lr}"]', '"{lr}", "a\\0b"]'), "command[4]: 'a\\x00b' contains a NUL byte"),
    "a cwd that is a symlink loop": (_cwd_loop, "cwd: cwd 'a/x' cannot be resolved"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_the_api_refuses_with_a_config_error(case: str, tmp_path: Path) -> None:
    make, expected = CASES[case]
    file = make(tmp_path)
    with pytest.raises(ConfigError) as info:
        load_campaign(file, check_paths=False)
    assert expected in str(info.value) and "autoresearch config check" in str(info.value)


@pytest.mark.parametrize("case", list(CASES))
def test_config_check_exits_2_without_a_traceback(case: str, tmp_path: Path) -> None:
    make, expected = CASES[case]
    result = runner.invoke(app, ["config", "check", str(make(tmp_path))], env={"COLUMNS": "400"})
    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert expected in " ".join(result.stderr.split())


@pytest.mark.parametrize(("command", "case"), [("config check", "10k-deep flow nesting"), ("config check", "a FIFO"),
                                               ("config check", "a cwd that is a symlink loop"),
                                               ("run", "a cwd that is a symlink loop"), ("run", "a NUL byte in env")])
def test_config_check_in_its_own_process(command: str, case: str, tmp_path: Path) -> None:
    make, expected = CASES[case]
    done = subprocess.run(
        [sys.executable, "-c", "from autoresearch.cli import main; main()", *command.split(), str(make(tmp_path))],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "400",
                           "AUTORESEARCH_HOME": str(tmp_path / "home")},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and expected in " ".join(done.stderr.split())


def test_the_good_file_loads(tmp_path: Path) -> None:
    campaign = load_campaign(_write(tmp_path, GOOD), check_paths=False)
    assert campaign.budget.max_trials == 4 and campaign.search_space["depth"].high == 8


# issue 33 item 9: a campaign name is a name, wherever it is read, never a path into another home
OTHER_HOME_NAMES = ["../../home-x/campaigns/c", "../c", "/abs/c", "a/b", ".."]
NAME_READERS = {
    "status": (["status", "{name}"], None),
    "status --json": (["status", "{name}", "--json"], None),
    "report": (["report", "{name}"], None),
    "resume": (["resume", "{name}", "--quiet"], None),
    "chat": (["chat", "{name}", "--no-llm", "--wait", "0"], "/status\n"),
    "list_trials": (["skills", "call", "list_trials", "--campaign", "{name}"], None),
}


@pytest.mark.parametrize("reader", list(NAME_READERS))
@pytest.mark.parametrize("name", OTHER_HOME_NAMES)
def test_a_name_that_is_a_path_is_refused_by_every_reader(reader: str, name: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from autoresearch.campaign import CampaignState, Ledger
    from tests.autoresearch.campaign.conftest import make_campaign

    other = tmp_path / "home-x"
    Ledger.open(make_campaign(tmp_path, name="c"), other).set_state(CampaignState.completed, "done")
    mine = tmp_path / "home-me"
    (mine / "campaigns").mkdir(parents=True)  # so `campaigns/../../home-x` resolves
    monkeypatch.chdir(tmp_path)
    before = sorted(p.relative_to(other) for p in other.rglob("*"))
    args, stdin = NAME_READERS[reader]

    result = runner.invoke(app, [a.format(name=name) for a in args], input=stdin,
                           env={"AUTORESEARCH_HOME": str(mine), "COLUMNS": "400"})

    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    assert f"{name!r} is not a campaign name: use letters, digits and ._-" in " ".join(result.stderr.split())
    assert "home-x" not in result.stdout  # nothing of the other home's campaign was shown
    assert sorted(p.relative_to(other) for p in other.rglob("*")) == before  # nor written there (report/)


@pytest.mark.parametrize("command", [["status", "old"], ["status", "old", "--json"], ["report", "old"]])
def test_a_stored_config_refused_now_is_one_clear_error(command: list[str], tmp_path: Path) -> None:
    """A campaign an older version ran with an int range of +-1e30 and a NUL in env (issue 33
    item 8): its readers say what the stored config breaks, never a ValidationError traceback."""
    import optuna

    from autoresearch.campaign import Ledger
    from autoresearch.campaign.ledger.optuna_ledger import CONFIG_ATTR
    from tests.autoresearch.campaign.conftest import make_campaign

    home = tmp_path / "home"
    ledger = Ledger.open(make_campaign(tmp_path, name="old"), home)
    study = optuna.load_study(study_name="old", storage=ledger.storage_url)
    config = study.user_attrs[CONFIG_ATTR]
    config["search_space"]["y"].update(low=-10**30, high=10**30)
    study.set_user_attr(CONFIG_ATTR, config | {"env": {"A": "x\x00y"}})

    result = runner.invoke(app, command, env={"AUTORESEARCH_HOME": str(home), "COLUMNS": "400"})

    assert result.exit_code == 2 and isinstance(result.exception, SystemExit), result.output
    text = " ".join(result.stderr.split())
    assert f"campaign 'old': the config stored in {home}/campaigns/old/optuna.db is refused now" in text
    assert "search_space.y.int: -1000000000000000000000000000000 is too large" in text and "NUL byte" in text
    assert "run it under a new name" in text
