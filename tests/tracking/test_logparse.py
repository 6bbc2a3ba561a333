"""The log-metrics parser on tricky input, and incremental parsing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tracking import MetricPoint, MetricRules, parse_metrics
from tracking.logparse import _searched_pairs, _text_pairs

TRICKY = (
    b"starting at 12:30:01 on localhost:8080, see http://x:5000/a\n"
    b"step: 1\n"
    b"loss: 2.5, acc=0.1\n"
    b"\x1b[32mstep 2 | loss: 2.0 | lr: 1e-3\x1b[0m\n"
    b'{"step": 3, "loss": 1.5, "val": {"acc": 0.5}, "ok": true, "name": "x"}\n'
    b" 10%|#   | loss=1.2\r 20%|##  | loss=1.1\n"
    b"Epoch 4/10 train_loss=0.3\n"
    b"epoch: 5, step: 70, grad_norm: nan\n"
    b"Traceback: nothing numeric here\n"
    b"Overriding: learning_rate = 0.001\n"  # prose: the key follows a word that is no pair
    b"\xff\xfe val_bpb: 0.998\n"  # broken utf8 is no word
)


def _triples(points: list[MetricPoint]) -> list[tuple[str, float, int]]:
    return [(p.key, p.value, p.step) for p in points]


def test_parses_key_values_json_steps_and_ignores_noise() -> None:
    result = parse_metrics(TRICKY)
    got = _triples(result.points)
    assert got[:10] == [
        ("loss", 2.5, 1), ("acc", 0.1, 1),
        ("loss", 2.0, 2), ("lr", 0.001, 2),
        ("loss", 1.5, 3), ("val/acc", 0.5, 3),
        ("loss", 1.2, 3), ("loss", 1.1, 3),
        ("train_loss", 0.3, 4),
        ("epoch", 5.0, 70),  # step wins over epoch; epoch is then a metric
    ]  # fmt: skip
    assert got[10][0] == "grad_norm" and got[10][2] == 70 and got[10][1] != got[10][1]  # NaN kept
    assert got[11] == ("val_bpb", 0.998, 70)
    assert len(got) == 12  # no localhost, clock time, URL port, booleans or prose
    assert result.state.offset == len(TRICKY) and result.state.step == 70


def test_metrics_before_any_step_count_their_own_steps() -> None:
    result = parse_metrics(b"loss: 3\nloss: 2\nacc: 0.5\nloss: 1\n")
    assert _triples(result.points) == [("loss", 3, 0), ("loss", 2, 1), ("acc", 0.5, 0), ("loss", 1, 2)]


def test_incremental_parsing_equals_parsing_at_once() -> None:
    whole = parse_metrics(TRICKY, final=True)
    for cut in range(1, len(TRICKY), 7):
        first = parse_metrics(TRICKY[:cut])
        assert first.state.offset <= cut  # a partial line waits
        rest = parse_metrics(TRICKY[first.state.offset :], first.state, final=True)
        assert _comparable(first.points + rest.points) == _comparable(whole.points)


def _comparable(points: list[MetricPoint]) -> list[tuple[str, int, str]]:
    return [(p.key, p.step, repr(p.value)) for p in points]  # repr: NaN equals NaN


def test_partial_last_line_waits_unless_final() -> None:
    assert parse_metrics(b"loss: 1\nacc: 0.").state.offset == len(b"loss: 1\n")
    assert _triples(parse_metrics(b"acc: 0.5", final=True).points) == [("acc", 0.5, 0)]


def test_custom_pattern() -> None:
    # nanoGPT style: "iter 10: loss 2.3000, time 30.00ms"
    rules = MetricRules(patterns=(r"iter (?P<iter>\d+): loss (?P<loss>[\d.]+), time (?P<time>[\d.]+)ms",))
    result = parse_metrics(b"iter 10: loss 2.3000, time 30.00ms\niter 20: loss 2.1000, time 29.00ms\n", rules=rules)
    assert _triples(result.points) == [("loss", 2.3, 10), ("time", 30.0, 10), ("loss", 2.1, 20), ("time", 29.0, 20)]


ONE_PAIR_LINES = st.builds(
    lambda lead, key, sep, value, trail: f"{lead}{key}{sep}{value}{trail}",
    st.sampled_from(["", " ", "  ", "\t"]),
    st.sampled_from(["step", "Step", "epoch", "iter", "loss", "val/acc", "train.loss", "_x1", "lr"]),
    st.sampled_from([": ", ":  ", "=", " = ", ":", " :", ":\t"]),
    st.one_of(st.integers(-5, 10**6).map(str), st.floats(allow_nan=True, allow_infinity=True).map(repr),
              st.sampled_from(["1e-3", "1E5", ".5", "5.", "+3", "-0", "nan", "NaN", "inf", "-Infinity", "1e", "1.5x",
                               "8080/a", "3,", "2 |", "0.1 lr"])),
    st.sampled_from(["", " ", "\t", " x", ",", " step 3"]),
)  # fmt: skip


@given(ONE_PAIR_LINES)
def test_the_one_pair_fast_path_reads_a_line_as_the_general_search_does(line: str) -> None:
    """`_text_pairs` reads a lone `key: value` line without the general search; both agree on it
    and on every near miss (no space after the colon, a word after the value, a second pair), config
    lines included when they are read."""
    fast, general = _text_pairs(line, MetricRules(config_names=None)), _searched_pairs(line)
    assert [(k, repr(v), s) for k, v, s in fast] == [(k, repr(v), s) for k, v, s in general], line
