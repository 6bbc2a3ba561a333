"""examples/tinygpt: the FIXED evaluation in-process, train.py as a real subprocess. Needs torch."""

from __future__ import annotations

import math
import sys

import pytest

torch = pytest.importorskip("torch")

from tests.examples._jobs import EXAMPLES, job_env, last_line, run_job, series, start_job, terminate_after  # noqa: E402

TRAIN = EXAMPLES / "tinygpt" / "train.py"
SMALL = ("--width", "64", "--depth", "2", "--batch-size", "16", "--lr", "1e-2", "--warmup", "10", "--device", "cpu")

pytestmark = pytest.mark.torch


def cpu_env(**extra) -> dict[str, str]:
    # One thread: on a shared, oversubscribed CPU two torch threads fighting for cores make fewer steps.
    return job_env(OMP_NUM_THREADS="1", **extra)


def _evaluation():
    sys.path.insert(0, str(TRAIN.parent))
    try:
        import evaluation
    finally:
        sys.path.remove(str(TRAIN.parent))
    return evaluation


def test_the_evaluation_is_marked_fixed_and_scores_a_uniform_model_at_8_bits_per_byte():
    evaluation = _evaluation()
    assert (TRAIN.parent / "evaluation.py").read_text().startswith('"""FIXED')

    class Uniform(torch.nn.Module):
        def forward(self, idx):
            return torch.zeros(*idx.shape, 256)

    train, val = evaluation.load_splits()
    assert evaluation.load_splits() == (train, val)  # deterministic split
    assert len(val) == pytest.approx(len(train) / 9, rel=0.01)
    assert evaluation.evaluate_bpb(Uniform(), val, "cpu") == pytest.approx(8.0)
    assert 3.0 < evaluation.unigram_bpb(train, val) < 6.0


def test_a_10_second_cpu_run_beats_the_unigram_baseline():
    result = run_job(TRAIN, "--time-budget", "10", "--eval-every", "5", *SMALL, env=cpu_env(), timeout=300)

    assert result.returncode == 0, result.stderr
    key, final = last_line(result.stdout)
    assert key == "val_bpb"
    baseline = series(result.stdout, "unigram_bpb")[0]
    assert final < baseline, f"val_bpb {final} is not below the unigram baseline {baseline}"
    assert len(series(result.stdout, "val_bpb")) >= 2  # at the intermediate eval and at the end
    assert all(value > 0 for value in series(result.stdout, "tokens_per_s").values())
    print(f"tinygpt 10 s CPU: val_bpb {final:.3f}, unigram {baseline:.3f}")


def test_sigterm_checkpoints_and_a_new_attempt_continues_from_that_step(tmp_path):
    env = cpu_env(AR_CHECKPOINT_DIR=tmp_path)
    proc = start_job(TRAIN, "--time-budget", "120", "--log-every", "5", *SMALL, env=env)
    code, first_out, err = terminate_after(
        proc, lambda lines: any(line.startswith("step: ") and int(line.split()[1]) >= 10 for line in lines))
    assert code == 143, err
    ckpt = torch.load(tmp_path / "tinygpt-checkpoint.pt", weights_only=True)
    assert f"checkpoint saved to {tmp_path / 'tinygpt-checkpoint.pt'} at step {ckpt['step']}" in err
    assert ckpt["step"] >= 10

    # The new attempt gets two more seconds of training on top of what the first one used.
    second = run_job(TRAIN, "--time-budget", str(ckpt["train_time"] + 2), "--log-every", "5", *SMALL, env=env,
                     timeout=300)
    assert second.returncode == 0, second.stderr
    assert f"resumed from {tmp_path / 'tinygpt-checkpoint.pt'} at step {ckpt['step']}" in second.stderr
    steps = sorted(series(second.stdout, "train_loss"))
    assert steps[0] > ckpt["step"]
    assert min(series(second.stdout, "unigram_bpb")) == ckpt["step"]  # the header names the resumed step
    assert series(second.stdout, "train_seconds")[steps[-1]] >= ckpt["train_time"] + 2
    assert last_line(second.stdout)[0] == "val_bpb"


def test_nan_guard_exits_3():
    result = run_job(TRAIN, *SMALL, "--lr", "1e30", "--time-budget", "20", env=cpu_env(), timeout=300)
    assert result.returncode == 3
    assert "nan guard: loss is nan at step" in result.stderr


def test_bad_arguments_exit_2():
    for args in (["--width", "100"], ["--depth", "0"], ["--device", "tpu"]):
        result = run_job(TRAIN, *args)
        assert result.returncode == 2, args
        assert "error:" in result.stderr


def test_logs_val_bpb_and_tokens_per_s_to_the_given_mlflow_run(mlflow_run):
    from mlflow.tracking import MlflowClient

    uri, run_id = mlflow_run
    result = run_job(TRAIN, "--time-budget", "3", "--eval-every", "1.5", *SMALL, timeout=300,
                     env=cpu_env(MLFLOW_TRACKING_URI=uri, MLFLOW_RUN_ID=run_id))
    assert result.returncode == 0, result.stderr

    client = MlflowClient(tracking_uri=uri)
    history = {m.step: m.value for m in client.get_metric_history(run_id, "val_bpb")}
    printed = series(result.stdout, "val_bpb")
    assert history.keys() == printed.keys() and len(history) >= 2
    assert all(math.isclose(history[s], printed[s], rel_tol=1e-5) for s in printed)
    assert client.get_metric_history(run_id, "tokens_per_s")
    assert client.get_run(run_id).data.params["width"] == "64"
