"""examples/synthetic: the benchmark functions in-process, and job.py as a real subprocess."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time

import pytest

from examples.synthetic.functions import BRANIN, FUNCTIONS, HARTMANN6, branin, hartmann6, regret
from tests.examples._jobs import EXAMPLES, job_env, last_line, run_job, series, start_job, terminate_after

JOB = EXAMPLES / "synthetic" / "job.py"
FAST = ("--step-seconds", "0")


def point_args(x) -> list[str]:
    return [arg for i, v in enumerate(x, start=1) for arg in (f"--x{i}", repr(float(v)))]


def run_point(fn, x, *extra: str, env=None):
    return run_job(JOB, "--function", fn.name, *point_args(x), *extra, env=env)


def _job_module():
    """job.py imported in-process (it imports its sibling `functions` as a top-level module)."""
    sys.path.insert(0, str(JOB.parent))
    try:
        import job
    finally:
        sys.path.remove(str(JOB.parent))
    return job


# ---------------------------------------------------------------- the functions


def test_known_minima_are_reached_at_the_known_optima():
    for x in BRANIN.argmin:
        assert branin(x) == pytest.approx(0.397887, abs=1e-5)
    assert hartmann6(HARTMANN6.argmin[0]) == pytest.approx(-3.32237, abs=1e-5)
    assert regret("branin", branin((0.0, 0.0))) == pytest.approx(branin((0.0, 0.0)) - 0.397887)


def test_no_random_point_beats_the_known_minimum():
    rng = random.Random(0)
    for fn in FUNCTIONS.values():
        values = [fn([rng.uniform(lo, hi) for lo, hi in fn.bounds]) for _ in range(2000)]
        assert min(values) >= fn.minimum - 1e-6
        assert max(values) - min(values) > fn.spread / 2  # the search space is not flat


# ---------------------------------------------------------------- the job


def test_prints_a_learning_curve_ending_exactly_at_the_function_value():
    for fn, x in ((BRANIN, (1.0, 7.0)), (HARTMANN6, (0.1, 0.2, 0.3, 0.4, 0.5, 0.6))):
        result = run_point(fn, x, *FAST)
        assert result.returncode == 0, result.stderr
        curve = series(result.stdout, "objective")
        assert sorted(curve) == list(range(1, 21))
        assert last_line(result.stdout) == ("objective", curve[20])
        assert curve[20] == pytest.approx(fn(x), rel=1e-9)
        assert curve[1] - fn(x) > 0.1 * fn.spread  # it starts well above where it ends


def test_the_same_arguments_print_the_same_curve_and_the_seed_changes_only_the_noise():
    x = (2.0, 5.0)
    a, b = run_point(BRANIN, x, *FAST), run_point(BRANIN, x, *FAST)
    c = run_point(BRANIN, x, *FAST, "--seed", "1")
    assert a.stdout == b.stdout
    assert series(a.stdout, "objective")[5] != series(c.stdout, "objective")[5]
    assert last_line(a.stdout) == last_line(c.stdout)


def test_learning_curves_cross():
    job = _job_module()
    rng = random.Random(1)
    points = [(rng.uniform(-5, 10), rng.uniform(0, 15)) for _ in range(30)]
    args = job.parse_args(["--x1", "0", "--x2", "0", "--noise", "0"])
    early = [job.curve_value(BRANIN, list(x), 2, args) for x in points]
    pairs = [(i, j) for i in range(len(points)) for j in range(i + 1, len(points))
             if (early[i] < early[j]) != (branin(points[i]) < branin(points[j]))]
    assert pairs, "with noise off, early ranks should still disagree with final ranks for some pair"

    i, j = pairs[0]  # the job prints the same crossing curves
    a, b = (series(run_point(BRANIN, points[k], *FAST, "--noise", "0").stdout, "objective") for k in (i, j))
    assert (a[2] < b[2]) != (a[20] < b[20])


def test_deceptive_good_points_start_worse_than_bad_points_and_end_better():
    good, bad = BRANIN.argmin[1], (0.0, 0.0)
    early = {}
    for name, x in (("good", good), ("bad", bad)):
        result = run_point(BRANIN, x, *FAST, "--noise", "0", "--deceptive")
        early[name] = series(result.stdout, "objective")
    assert early["good"][2] > early["bad"][2]
    assert early["good"][20] < early["bad"][20]
    plain = series(run_point(BRANIN, good, *FAST, "--noise", "0").stdout, "objective")
    assert plain[2] < early["good"][2]


def test_points_outside_the_search_space_or_missing_coordinates_exit_2():
    for args in (["--x1", "11", "--x2", "1"], ["--x1", "1"], ["--x1", "1", "--x2", "1", "--x3", "0.5"],
                 ["--x1", "1", "--x2", "1", "--fail-prob", "2"]):
        result = run_job(JOB, "--function", "branin", *args)
        assert result.returncode == 2, args
        assert "error:" in result.stderr


# ---------------------------------------------------------------- faults


def _fault_steps(*args: str) -> dict:
    """The job's own fault draws for these arguments, computed in-process."""
    job = _job_module()
    return job.fault_steps(job.parse_args(list(args)))


def test_fault_draws_follow_the_probability_and_the_fault_seed():
    base = ("--function", "branin", "--x1", "1", "--x2", "2", "--fail-prob", "0.3")
    draws = [_fault_steps(*base, "--fault-seed", str(seed))["fail"] for seed in range(400)]
    assert draws == [_fault_steps(*base, "--fault-seed", str(seed))["fail"] for seed in range(400)]
    assert 0.22 < sum(d is not None for d in draws) / len(draws) < 0.38
    assert all(1 <= d <= 20 for d in draws if d is not None)
    # Other points fail at other seeds: a campaign with one fault seed still sees a mix.
    other = [_fault_steps("--function", "branin", "--x1", "3", "--x2", "4", "--fail-prob", "0.3",
                          "--fault-seed", str(seed))["fail"] for seed in range(400)]
    assert draws != other


def test_fail_prob_crashes_with_a_traceback_where_the_draw_says():
    seed = next(s for s in range(100) if _fault_steps("--x1", "1", "--x2", "2", "--fail-prob", "0.5",
                                                    "--fault-seed", str(s))["fail"])
    step = _fault_steps("--x1", "1", "--x2", "2", "--fail-prob", "0.5", "--fault-seed", str(seed))["fail"]
    result = run_point(BRANIN, (1, 2), *FAST, "--fail-prob", "0.5", "--fault-seed", str(seed))
    assert result.returncode == 1
    assert "Traceback" in result.stderr and f"injected fault: crash at step {step}" in result.stderr
    assert max(series(result.stdout, "objective"), default=0) == step - 1


def test_nan_prob_trips_the_nan_guard():
    result = run_point(BRANIN, (1, 2), *FAST, "--nan-prob", "1")
    assert result.returncode == 3
    assert "nan guard: objective is nan at step" in result.stderr
    assert "nan" not in result.stdout


def test_hang_prob_stops_progress_and_ignores_sigterm_until_sigkill(tmp_path):
    proc = start_job(JOB, "--function", "branin", "--x1", "1", "--x2", "2", "--hang-prob", "1", *FAST,
                     env=job_env(AR_CHECKPOINT_DIR=tmp_path))
    for line in proc.stderr:
        if "injected fault: hanging" in line:
            break
    proc.send_signal(signal.SIGTERM)
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=1.5)
    proc.kill()
    assert proc.wait(timeout=30) == -signal.SIGKILL
    assert not list(tmp_path.iterdir())  # a wedged process writes no checkpoint


# ---------------------------------------------------------------- checkpoints and MLflow


def test_sigterm_checkpoints_and_the_rerun_completes_the_same_curve(tmp_path):
    x = (0.3, 0.6, 0.1, 0.9, 0.5, 0.2)
    whole = run_point(HARTMANN6, x, *FAST)
    env = job_env(AR_CHECKPOINT_DIR=tmp_path)
    proc = start_job(JOB, "--function", "hartmann6", *point_args(x), "--step-seconds", "0.3", env=env)
    code, first_out, err = terminate_after(proc, lambda lines: "step: 3\n" in lines)
    assert code == 143, err
    saved = json.loads((tmp_path / "synthetic-checkpoint.json").read_text())
    assert saved["step"] == max(series(first_out, "objective"))

    started = time.monotonic()
    second = run_point(HARTMANN6, x, *FAST, env=env)
    assert second.returncode == 0, second.stderr
    assert min(series(second.stdout, "objective")) == saved["step"] + 1
    assert first_out + second.stdout == whole.stdout
    assert time.monotonic() - started < 60


def test_logs_per_step_objective_to_the_given_mlflow_run_unless_told_not_to(mlflow_run):
    from mlflow.tracking import MlflowClient

    uri, run_id = mlflow_run
    env = job_env(MLFLOW_TRACKING_URI=uri, MLFLOW_RUN_ID=run_id)
    result = run_point(BRANIN, (1, 2), *FAST, "--steps", "5", env=env)
    assert result.returncode == 0, result.stderr

    client = MlflowClient(tracking_uri=uri)
    history = client.get_metric_history(run_id, "objective")
    assert {m.step: pytest.approx(m.value) for m in history} == series(result.stdout, "objective")
    assert client.get_run(run_id).data.params["x2"] == "2.0"

    quiet = run_point(BRANIN, (1, 2), *FAST, "--steps", "7", "--no-mlflow", env=env)
    assert quiet.returncode == 0
    assert len(client.get_metric_history(run_id, "objective")) == 5


def test_the_job_imports_only_the_standard_library():
    code = ("import sys; sys.path.insert(0, '.'); import job; job.main(['--x1', '1', '--x2', '2', '--steps', '2']);"
            "print('third-party:', sorted(m for m in ('numpy', 'mlflow', 'yaml', 'pydantic') if m in sys.modules))")
    plain = subprocess.run([sys.executable, "-c", code], cwd=JOB.parent, env=job_env(),
                           capture_output=True, text=True, timeout=60)
    assert plain.returncode == 0, plain.stderr
    assert "third-party: []" in plain.stdout
