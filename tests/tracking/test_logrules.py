"""Reading logs of scripts we did not write: prose, nanoGPT and HF Trainer lines, patterns, `record`."""

from __future__ import annotations

import math

from tracking import MetricPoint, MetricRules, builtin_key, captured_names, parse_metrics, pattern_problem

NANOGPT = b"""\
Overriding config with config/train_shakespeare_char.py:
batch_size = 64
learning_rate = 1e-3 # with baby networks can afford to go a bit higher
Overriding: learning_rate = 0.001
Overriding: max_iters = 500
tokens per iteration will be: 768
found vocab_size = 65 (inside data/shakespeare_char/meta.pkl)
number of parameters: 10.65M
num decayed parameter tensors: 10, with 1,234 parameters
step 0: train loss 4.2874, val loss 4.2823
iter 0: loss 4.2654, time 30.12ms, mfu -100.00%
iter 10: loss 3.2, time 29.00ms, mfu 2.10%
step 250: train loss 1.9012, val loss 2.0034
iter 250: loss 1.95, time 31.00ms, mfu 2.20%
"""
NANOGPT_PATTERNS = (
    r"step (?P<step>\d+): train loss (?P<train_loss>[-+.\deE]+), val loss (?P<val_loss>[-+.\deE]+)",
    r"iter (?P<iter>\d+): loss (?P<loss>[-+.\deE]+)",
)


def _triples(points: list[MetricPoint]) -> list[tuple[str, float, int]]:
    return [(p.key, p.value, p.step) for p in points]


def test_prose_and_config_lines_never_become_metrics() -> None:
    assert parse_metrics(NANOGPT, final=True).points == []  # `batch_size = 64` is nanoGPT's config file echoed
    for names in (frozenset({"batch_size"}), None):  # a config line gives the names the rules ask for
        got = _triples(parse_metrics(NANOGPT, rules=MetricRules(config_names=names), final=True).points)
        assert got == [("batch_size", 64.0, 0)]
    metrics = b"loss: 2.5\nloss=2.4\nstep 3 | loss = 2.3\n"  # no config lines: no space before `=`, or a step
    assert _triples(parse_metrics(metrics, final=True).points) == [("loss", 2.5, 0), ("loss", 2.4, 1), ("loss", 2.3, 3)]
    for prose in (b"tokens per iteration will be: 768\n", b"num decayed parameter tensors: 10\n",
                  b"Overriding: learning_rate = 0.001\n", b"using fused AdamW: True\n", b"loss: 2.5 (best so far)\n"):
        assert parse_metrics(prose, final=True).points == [], prose


def test_nanogpt_lines_through_patterns_at_their_steps_and_only_what_is_recorded() -> None:
    rules = MetricRules(patterns=NANOGPT_PATTERNS, record=frozenset(captured_names(NANOGPT_PATTERNS)))
    got = _triples(parse_metrics(NANOGPT, rules=rules, final=True).points)
    assert got == [
        ("train_loss", 4.2874, 0), ("val_loss", 4.2823, 0),
        ("loss", 4.2654, 0), ("loss", 3.2, 10),
        ("train_loss", 1.9012, 250), ("val_loss", 2.0034, 250),
        ("loss", 1.95, 250),
    ]  # fmt: skip  (no batch_size: not recorded)
    assert captured_names(NANOGPT_PATTERNS) == ["train_loss", "val_loss", "loss"]


def test_bracket_and_validation_lines_need_patterns() -> None:
    log = b"[1/3] val loss 0.47\n[2/3] val loss 0.41\nEpoch 1: Validation loss: 0.39\nEpoch 2: Validation loss: 0.35\n"
    assert parse_metrics(log, final=True).points == []  # prose to the built-ins
    rules = MetricRules(patterns=(r"^\[(?P<epoch>\d+)/\d+\] val loss (?P<val_loss>[-+.\deE]+)",
                                  r"^Epoch (?P<epoch>\d+): Validation loss: (?P<val_loss>[-+.\deE]+)"))  # fmt: skip
    got = _triples(parse_metrics(log, rules=rules, final=True).points)
    assert got == [("val_loss", 0.47, 1), ("val_loss", 0.41, 2), ("val_loss", 0.39, 1), ("val_loss", 0.35, 2)]


def test_hf_trainer_dict_lines_and_json_lines() -> None:
    log = (
        b"{'loss': 2.31, 'grad_norm': nan, 'learning_rate': 5e-05, 'epoch': 0.5}\n"
        b"\r 50%|#####     | 5/10 [00:01<00:01]\r{'eval_loss': 0.39, 'eval_runtime': 1.2, 'epoch': 1.0}\n"
        b"{'loss': 2.01, 'learning_rate': -1e-05, 'epoch': 1.0, 'nested': {'a': 1}, 'name': 'x', 'ok': True}\n"
        b'{"step": 7, "eval_loss": 0.3}\n'
        b"{'train_runtime': 10.5, 'train_loss': 2.1 ** 9, 'epoch': 2.0}\n"  # no literal: not read
    )
    got = _triples(parse_metrics(log, final=True).points)
    assert got[0] == ("loss", 2.31, 0) and math.isnan(got[1][1]) and got[1][0] == "grad_norm"
    assert got[2:] == [
        ("learning_rate", 5e-05, 0), ("epoch", 0.5, 0),  # a float epoch is a metric, not the step
        ("eval_loss", 0.39, 0), ("eval_runtime", 1.2, 0), ("epoch", 1.0, 1),
        ("loss", 2.01, 1), ("learning_rate", -1e-05, 1), ("epoch", 1.0, 2), ("nested/a", 1.0, 0),
        ("eval_loss", 0.3, 7),
    ]  # fmt: skip


def test_transformers_5_quoted_numbers_after_progress_bars_read_as_4x_bare_numbers() -> None:
    """transformers 5.x formats its log numbers with `.4g` inside quotes; its tqdm bar on stderr leaves
    no newline, so the dict printed to stdout follows the bar on the same log line."""
    bar = "\r 50%|\u2588\u2588\u2588\u2588\u2588     | 2/4 [00:02<00:02, 3.30it/s]".encode()
    v5 = (
        bar + b"{'loss': '2.31', 'grad_norm': '1.2', 'learning_rate': '5e-05', 'epoch': '0.5'}\n"
        + bar + b"{'loss': '2.01', 'grad_norm': 'nan', 'learning_rate': '0', 'epoch': '1'}\n"
        b"\r\x1b[A{'eval_loss': '3.462', 'eval_runtime': '0.0629', 'epoch': '1'}\n"
        b"{'train_runtime': '1.234', 'train_loss': '2.16', 'epoch': '1', 'note': 'x1', 'e': '1e'}\n"
    )
    v4 = (
        b"{'loss': 2.31, 'grad_norm': 1.2, 'learning_rate': 5e-05, 'epoch': 0.5}\n"
        b"{'loss': 2.01, 'grad_norm': nan, 'learning_rate': 0.0, 'epoch': 1.0}\n"
        b"{'eval_loss': 3.462, 'eval_runtime': 0.0629, 'epoch': 1.0}\n"
        b"{'train_runtime': 1.234, 'train_loss': 2.16, 'epoch': 1.0}\n"
    )
    got = [(k, repr(v), step) for k, v, step in _triples(parse_metrics(v5, final=True).points)]
    assert got == [(k, repr(v), step) for k, v, step in _triples(parse_metrics(v4, final=True).points)]
    assert ("epoch", "1.0", 1) in got and ("eval_loss", "3.462", 0) in got  # a quoted '1' is a metric, never the step
    assert parse_metrics(b"Config: {'lr': '0.1'}\n", final=True).points == []  # prose before a dict: no bar


def test_record_keeps_only_the_named_metrics() -> None:
    log = b"step: 1 loss: 2.0 acc: 0.5 lr: 0.1\nstep: 2 loss: 1.0 acc: 0.7 lr: 0.1\n"
    rules = MetricRules(record=frozenset({"acc"}))
    assert _triples(parse_metrics(log, rules=rules).points) == [("acc", 0.5, 1), ("acc", 0.7, 2)]
    assert len(parse_metrics(log).points) == 6  # record None: every parsed number


def test_a_pattern_that_backtracks_without_end_is_cut_off_and_the_log_goes_on() -> None:
    rules = MetricRules(patterns=(r"^(?P<x>(a|aa)+)$",))
    log = b"a" * 40 + b"b\n" + b"aaaa\nloss: 1\n"
    got = _triples(parse_metrics(log, rules=rules, final=True).points)
    assert got == [("loss", 1.0, 0)]  # the hostile line gives nothing; "aaaa" is no number; loss via built-ins


def test_pattern_checks() -> None:
    assert "does not compile" in pattern_problem(r"loss (?P<loss>[\d.]+")
    assert "no named group" in pattern_problem(r"loss ([\d.]+)")
    assert pattern_problem(r"loss (?P<loss>[\d.]+)") is None
    assert captured_names([r"(?P<epoch>\d+) (?P<acc>\d+)", r"(?P<acc>\d+) (?P<f1>\d+)"]) == ["acc", "f1"]
    assert builtin_key("train/loss") and builtin_key("val_bpb") and not builtin_key("val loss")
    assert not builtin_key("val-loss")
