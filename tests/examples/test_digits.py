"""examples/digits/train.py as the runner runs it: a real subprocess, its printed lines, signals, MLflow."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.examples._jobs import EXAMPLES, job_env, last_line, metrics, run_job, series, start_job, terminate_after

TRAIN = EXAMPLES / "digits" / "train.py"


def test_trains_past_90_percent_and_prints_one_metric_per_line_per_epoch():
    result = run_job(TRAIN, "--lr", "0.01", "--hidden", "64", "--activation", "relu", "--epochs", "15")

    assert result.returncode == 0, result.stderr
    accuracy = series(result.stdout, "val_accuracy")
    assert sorted(accuracy) == list(range(1, 16))
    assert set(series(result.stdout, "val_loss")) == set(accuracy)
    assert last_line(result.stdout) == ("val_accuracy", accuracy[15])
    assert accuracy[15] > 0.9
    assert accuracy[15] > accuracy[1]


def test_the_framework_log_parser_assigns_each_metric_to_its_epoch():
    from tracking import parse_metrics

    result = run_job(TRAIN, "--epochs", "3")
    points = parse_metrics(result.stdout.encode(), final=True).points

    assert [(p.step, p.key) for p in points] == [
        (epoch, key) for epoch in (1, 2, 3) for key in ("train_loss", "val_loss", "val_accuracy")
    ]


def test_sigterm_checkpoints_and_a_rerun_ends_like_an_uninterrupted_run(tmp_path):
    args = ("--lr", "0.003", "--hidden", "32", "--activation", "tanh", "--epochs", "8", "--seed", "7")
    whole = run_job(TRAIN, *args)
    assert whole.returncode == 0, whole.stderr

    env = job_env(AR_CHECKPOINT_DIR=tmp_path / "ckpt")
    proc = start_job(TRAIN, *args, "--epoch-delay", "0.5", env=env)
    code, first_out, first_err = terminate_after(proc, lambda lines: "epoch: 3\n" in lines)
    assert code == 143, first_err
    assert "sigterm: checkpoint saved" in first_err
    assert (tmp_path / "ckpt" / "digits-checkpoint.npz").exists()
    assert max(series(first_out, "val_accuracy")) < 8

    second = run_job(TRAIN, *args, env=env)
    assert second.returncode == 0, second.stderr
    assert "resumed from" in second.stderr
    resumed_epochs = sorted(series(second.stdout, "val_accuracy"))
    assert resumed_epochs[0] >= 3 and resumed_epochs[-1] == 8
    assert resumed_epochs[0] == max(series(first_out, "val_accuracy")) + 1
    # Same batches, same updates: every epoch after the resume prints what the whole run printed.
    whole_points = [p for p in metrics(whole.stdout) if p[0] >= resumed_epochs[0]]
    assert metrics(second.stdout) == whole_points
    assert last_line(second.stdout) == last_line(whole.stdout)


def test_sigterm_without_a_checkpoint_dir_exits_143_promptly():
    proc = start_job(TRAIN, "--epochs", "50", "--epoch-delay", "0.5")
    code, _, err = terminate_after(proc, lambda lines: "epoch: 1\n" in lines)
    assert code == 143
    assert "nothing saved" in err


def test_nan_guard_exits_3_with_a_message():
    result = run_job(TRAIN, "--lr", "1e200")  # the weights overflow to inf, the loss turns nan
    assert result.returncode == 3
    assert "nan guard: loss is nan at step" in result.stderr


def test_a_checkpoint_from_other_arguments_is_refused(tmp_path):
    env = job_env(AR_CHECKPOINT_DIR=tmp_path)
    proc = start_job(TRAIN, "--hidden", "32", "--epoch-delay", "0.5", env=env)
    assert terminate_after(proc, lambda lines: "epoch: 1\n" in lines)[0] == 143

    result = run_job(TRAIN, "--hidden", "48", env=env)
    assert result.returncode == 2
    assert "other arguments" in result.stderr and "fresh folder" in result.stderr


def test_bad_arguments_exit_2():
    for args in (["--activation", "gelu"], ["--hidden", "0"], ["--lr", "-1"], ["--epochs", "x"]):
        result = run_job(TRAIN, *args)
        assert result.returncode == 2, args
        assert "error:" in result.stderr


def test_logs_params_and_per_epoch_metrics_to_the_given_mlflow_run(mlflow_run):
    from mlflow.tracking import MlflowClient

    uri, run_id = mlflow_run
    result = run_job(TRAIN, "--lr", "0.01", "--hidden", "24", "--epochs", "4",
                     env=job_env(MLFLOW_TRACKING_URI=uri, MLFLOW_RUN_ID=run_id))
    assert result.returncode == 0, result.stderr

    client = MlflowClient(tracking_uri=uri)
    run = client.get_run(run_id)
    assert run.data.params["hidden"] == "24" and run.data.params["activation"] == "relu"
    history = client.get_metric_history(run_id, "val_accuracy")
    printed = series(result.stdout, "val_accuracy")
    assert {m.step: round(m.value, 6) for m in history} == printed
    assert {m.step for m in client.get_metric_history(run_id, "val_loss")} == {1, 2, 3, 4}


@pytest.mark.parametrize("env", [{}, {"MLFLOW_RUN_ID": "0123456789abcdef"}], ids=["no run id", "--no-mlflow"])
def test_without_a_run_id_or_with_no_mlflow_mlflow_is_never_imported(env):
    args = "['--epochs', '1', '--no-mlflow']" if env else "['--epochs', '1']"
    code = (f"import sys; sys.path.insert(0, '.'); import train; rc = train.main({args});"
            "print('mlflow imported:', 'mlflow' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], cwd=TRAIN.parent, env=job_env(**env),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "mlflow imported: False" in result.stdout and "val_accuracy: " in result.stdout
