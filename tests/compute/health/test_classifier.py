"""The failure classifier on a corpus of realistic log tails, and rules from config."""

from __future__ import annotations

import json

import pytest
import yaml

from compute.health import DEFAULT_RULES, Classifier, load_rules, signal_of
from compute.records import FailureClass
from tests.compute.health.helpers import LOGS

MANIFEST = yaml.safe_load((LOGS / "manifest.yaml").read_text())
CLASSIFIER = Classifier()


def test_corpus_is_big_and_covers_every_class():
    logs = {p.name for p in LOGS.glob("*.log")}
    assert logs == set(MANIFEST), "every log has a manifest entry and every entry a log"
    assert len(logs) >= 25
    assert {e["class"] for e in MANIFEST.values()} == {c.value for c in FailureClass}


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_corpus_log_is_classified_right(name):
    expected = MANIFEST[name]
    result = CLASSIFIER.classify(expected["exit_code"], (LOGS / name).read_text())
    assert (result.failure_class.value, result.rule) == (expected["class"], expected["rule"]), result.line
    assert result.explanation
    rule = next((r for r in DEFAULT_RULES if r["name"] == result.rule), {})
    if "pattern" in rule:
        assert result.line and result.line in (LOGS / name).read_text()


def test_the_matched_line_is_the_exception_not_the_traceback_header():
    result = CLASSIFIER.classify(1, (LOGS / "key_error_traceback.log").read_text())
    assert result.line == "KeyError: 'optim'"


def test_oom_on_one_rank_wins_over_the_nccl_timeouts_it_causes():
    result = CLASSIFIER.classify(1, (LOGS / "cuda_oom_one_rank_then_nccl_timeouts.log").read_text())
    assert result.failure_class is FailureClass.resource


@pytest.mark.parametrize("tail", [
    "sqlite3.OperationalError: database or disk is full",
    "optuna.exceptions.StorageInternalError: An exception is raised during the commit. (database or disk is full)",
    "OSError: [Errno 28] No space left on device: '/ckpt/model.pt'",
    "RuntimeError: write failed: ENOSPC",
    "OSError: [Errno 122] Disk quota exceeded",
])  # fmt: skip
def test_a_full_disk_is_a_resource_failure_not_the_trials_fault(tail):
    """Issue 20 item 8: ENOSPC in any of its spellings does not spend the trial as a user failure."""
    result = CLASSIFIER.classify(1, f"Traceback (most recent call last):\n  File \"train.py\", line 3\n{tail}\n")
    assert (result.failure_class, result.rule) == (FailureClass.resource, "disk_full"), result


@pytest.mark.parametrize(("exit_code", "signal"), [(-9, 9), (137, 9), (-11, 11), (139, 11), (1, None), (0, None),
                                                   (None, None)])
def test_signal_of_reads_popen_and_shell_conventions(exit_code, signal):
    assert signal_of(exit_code) == signal


def test_exit_code_2_without_usage_text_is_not_bad_arguments():
    result = CLASSIFIER.classify(2, "cannot open data/train.bin\n")
    assert result.rule == "unrecognized"


def test_config_rules_extend_and_override_builtin_ones(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"rules": [
        {"name": "flaky_filesystem", "class": "infra", "pattern": r"Stale file handle",
         "explanation": "the NFS mount went stale on this node"},
        {"name": "segfault", "class": "infra", "signals": [11],
         "explanation": "on this fleet segfaults come from a bad driver"},
    ]}))
    classifier = Classifier.from_config(path)
    stale = classifier.classify(1, "OSError: [Errno 116] Stale file handle: '/nfs/data/shard_3.bin'\n")
    assert (stale.failure_class, stale.rule) == (FailureClass.infra, "flaky_filesystem")
    crash = classifier.classify(-11, (LOGS / "segfault_signal.log").read_text())
    assert (crash.failure_class, crash.rule) == (FailureClass.infra, "segfault")
    assert [r.name for r in classifier.rules].count("segfault") == 1
    assert CLASSIFIER.classify(-11, "").failure_class is FailureClass.user  # the default is untouched


def test_rules_from_a_json_file_and_from_dicts(tmp_path):
    rule = {"name": "nan_loss_custom", "class": "user", "pattern": "DIVERGED", "explanation": "diverged"}
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([rule]))
    assert load_rules(path) == load_rules([rule])
    assert Classifier.from_config([rule]).classify(1, "run DIVERGED at step 9\n").rule == "nan_loss_custom"


@pytest.mark.parametrize(("rule", "message"), [
    ({"name": "x", "class": "hardware", "pattern": "a", "explanation": "e"}, "field class"),
    ({"name": "x", "class": "infra", "pattern": "(unclosed", "explanation": "e"}, "invalid regex"),
    ({"name": "x", "class": "infra", "explanation": "e"}, "has no condition"),
    ({"name": "x", "class": "infra", "pattern": "a", "explanation": "e", "colour": "red"}, "field colour"),
])
def test_a_bad_rule_file_names_the_file_the_rule_and_the_field(tmp_path, rule, message):
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump([{"name": "ok", "class": "user", "pattern": "a", "explanation": "e"}, rule]))
    with pytest.raises(ValueError) as err:
        load_rules(path)
    text = str(err.value)
    assert str(path) in text and "rule 2 ('x')" in text and message in text


def test_duplicate_config_rule_names_are_refused():
    rule = {"name": "dup", "class": "user", "pattern": "a", "explanation": "e"}
    with pytest.raises(ValueError, match="duplicate rule names"):
        Classifier.from_config([rule, rule])


def test_a_rule_file_that_is_not_a_list_is_refused(tmp_path):
    path = tmp_path / "rules.yaml"
    path.write_text("rules: just a string\n")
    with pytest.raises(ValueError, match="expected a list of rules"):
        load_rules(path)
