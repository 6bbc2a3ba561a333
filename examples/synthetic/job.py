"""A synthetic training job: Branin or Hartmann6 with a noisy learning curve. Standard library only.

Over --steps steps the reported `objective` (to minimise) falls from a config-dependent start
towards the function's value at the given point, with noise that shrinks to zero, so the last
reported value is exactly f(x). Curves of different points cross. With --deceptive, good points
start high and converge slowly while bad points converge fast (a trap for early pruning).

Output, one metric per line, each after a `step: N` line; the last line is the final result:

    step: 20
    objective: 0.3978873577

Faults for robustness tests, each drawn once per run from --fault-seed (default --seed) and the
point, so a run is reproducible:
  --fail-prob P   raise an exception (a traceback, exit 1) at a random step;
  --hang-prob P   stop making progress forever at a random step, ignoring SIGTERM like a wedged
                  process (only SIGKILL ends it);
  --nan-prob P    the objective turns NaN at a random step: the nan guard exits with code 3.

SIGTERM: saves `synthetic-checkpoint.json` into AR_CHECKPOINT_DIR (when set) and exits 143; a
later run with the same folder resumes at the next step and prints the same values.
MLflow: with MLFLOW_RUN_ID set, params and per-step metrics go to that run (unless --no-mlflow).

Known minima: Branin 0.397887, Hartmann6 -3.32237 (see functions.py).

    python job.py --function branin --x1 3.14 --x2 2.27
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import signal
import sys
import time
from pathlib import Path

from functions import FUNCTIONS, Function

EXIT_SIGTERM = 143
EXIT_NAN = 3
CHECKPOINT_NAME = "synthetic-checkpoint.json"
# Arguments that change what is printed; a checkpoint written with other values is refused.
RESULT_ARGS = ("function", "x", "steps", "noise", "deceptive", "seed", "fault_seed",
               "fail_prob", "hang_prob", "nan_prob")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--function", choices=sorted(FUNCTIONS), default="branin")
    for i in range(1, 7):
        parser.add_argument(f"--x{i}", type=float, help=f"coordinate {i} (Branin uses x1, x2; Hartmann6 x1..x6)")
    parser.add_argument("--steps", type=int, default=20, help="learning-curve length (default 20)")
    parser.add_argument("--step-seconds", type=float, default=0.02, help="sleep per step (default 0.02)")
    parser.add_argument("--noise", type=float, default=0.05,
                        help="noise scale, as a fraction of the function's spread (default 0.05)")
    parser.add_argument("--deceptive", action="store_true", help="good points start slowly")
    parser.add_argument("--seed", type=int, default=0, help="seeds the noise")
    parser.add_argument("--fault-seed", type=int, default=None, help="seeds the fault draws (default: --seed)")
    parser.add_argument("--fail-prob", type=float, default=0.0, help="probability of a crash")
    parser.add_argument("--hang-prob", type=float, default=0.0, help="probability of a hang")
    parser.add_argument("--nan-prob", type=float, default=0.0, help="probability of a NaN objective")
    parser.add_argument("--no-mlflow", action="store_true",
                        help="never import mlflow, even with MLFLOW_RUN_ID set (the runner reads the printed lines)")
    args = parser.parse_args(argv)

    fn = FUNCTIONS[args.function]
    dims = len(fn.bounds)
    given = [getattr(args, f"x{i}") for i in range(1, 7)]
    missing = [f"--x{i + 1}" for i in range(dims) if given[i] is None]
    extra = [f"--x{i + 1}" for i in range(dims, 6) if given[i] is not None]
    if missing or extra:
        parser.error(f"{args.function} takes --x1 .. --x{dims}: missing {missing or 'none'}, extra {extra or 'none'}")
    args.x = given[:dims]
    for i, (value, (low, high)) in enumerate(zip(args.x, fn.bounds), start=1):
        if not low <= value <= high:
            parser.error(f"--x{i} {value} is outside the {args.function} search space [{low}, {high}]")
    if args.steps < 1 or args.step_seconds < 0 or args.noise < 0:
        parser.error("--steps must be >= 1, --step-seconds and --noise >= 0")
    for name in ("fail_prob", "hang_prob", "nan_prob"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            parser.error(f"--{name.replace('_', '-')} must be in [0, 1], got {getattr(args, name)}")
    if args.fault_seed is None:
        args.fault_seed = args.seed
    return args


def _wave(u: list[float], salt: float) -> float:
    """A smooth pseudo-random value in [0, 1] of the normalised point: nearby points behave alike."""
    return 0.5 + 0.5 * math.sin(sum((2.1 + 1.3 * i) * ui for i, ui in enumerate(u)) * 3.0 + salt)


def curve_value(fn: Function, x: list[float], step: int, args: argparse.Namespace) -> float:
    """The objective reported at `step` (1-based); equals fn(x) exactly at the last step."""
    value = fn(x)
    u = [(xi - low) / (high - low) for xi, (low, high) in zip(x, fn.bounds)]
    badness = min(1.0, max(0.0, (value - fn.minimum) / fn.spread))
    if args.deceptive:  # good points: a high start and a slow approach; bad points: quick
        rate = 1.0 + 7.0 * badness
        amplitude = fn.spread * (0.3 + 1.2 * (1.0 - badness))
    else:
        rate = 1.5 + 6.0 * _wave(u, 0.0)
        amplitude = fn.spread * (0.2 + 0.8 * _wave(u, 1.7))
    progress = step / args.steps
    shape = (math.exp(-rate * progress) - math.exp(-rate)) / (1.0 - math.exp(-rate))
    noise = random.Random(f"noise:{args.seed}:{args.function}:{x}:{step}").gauss(0.0, 1.0)
    return value + amplitude * shape + args.noise * fn.spread * math.sqrt(1.0 - progress) * noise


def fault_steps(args: argparse.Namespace) -> dict[str, int | None]:
    """At which step each fault strikes (None: never). Always the same draws, whatever the probabilities."""
    rng = random.Random(f"faults:{args.fault_seed}:{args.function}:{args.x}")
    faults = {}
    for kind in ("fail", "hang", "nan"):
        u, step = rng.random(), rng.randint(1, args.steps)
        faults[kind] = step if u < getattr(args, f"{kind}_prob") else None
    return faults


def load_checkpoint(path: Path, args: argparse.Namespace) -> int:
    """The last completed step saved in `path` (0 when there is none)."""
    if not path.exists():
        return 0
    saved = json.loads(path.read_text())
    wanted = {name: getattr(args, name) for name in RESULT_ARGS}
    if saved["args"] != wanted:
        print(f"checkpoint {path} was written with other arguments {saved['args']}, not {wanted}: "
              "point AR_CHECKPOINT_DIR at a fresh folder (or delete the checkpoint) to start over", file=sys.stderr)
        sys.exit(2)
    return int(saved["step"])


def save_checkpoint(path: Path, step: int, args: argparse.Namespace) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"step": step, "args": {name: getattr(args, name) for name in RESULT_ARGS}}))
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)
    stop = {"requested": False}
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.update(requested=True))
    fn = FUNCTIONS[args.function]
    faults = fault_steps(args)
    ckpt_dir = os.environ.get("AR_CHECKPOINT_DIR")
    ckpt_path = Path(ckpt_dir) / CHECKPOINT_NAME if ckpt_dir else None
    done = load_checkpoint(ckpt_path, args) if ckpt_path else 0
    if done:
        print(f"resumed from {ckpt_path} after step {done}", file=sys.stderr)

    mlflow = None
    if os.environ.get("MLFLOW_RUN_ID") and not args.no_mlflow:
        import mlflow  # only when a run was handed to us

        mlflow.start_run(run_id=os.environ["MLFLOW_RUN_ID"])
        mlflow.log_params({"function": args.function, "deceptive": args.deceptive, "seed": args.seed,
                           **{f"x{i}": v for i, v in enumerate(args.x, start=1)}})

    for step in range(done + 1, args.steps + 1):
        deadline = time.monotonic() + args.step_seconds
        while not stop["requested"] and time.monotonic() < deadline:  # a "training step", interruptible
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
        if stop["requested"]:
            if ckpt_path:
                save_checkpoint(ckpt_path, step - 1, args)
                print(f"sigterm: checkpoint saved to {ckpt_path} after step {step - 1}", file=sys.stderr)
            if mlflow:
                mlflow.end_run(status="KILLED")
            return EXIT_SIGTERM
        if faults["fail"] == step:
            raise RuntimeError(f"injected fault: crash at step {step} (--fail-prob {args.fail_prob})")
        if faults["hang"] == step:
            print(f"injected fault: hanging at step {step} (--hang-prob {args.hang_prob})", file=sys.stderr)
            while True:  # wedged: SIGTERM sets the flag, but nothing looks at it any more
                time.sleep(3600)
        value = math.nan if faults["nan"] == step else curve_value(fn, args.x, step, args)
        if not math.isfinite(value):
            print(f"nan guard: objective is {value} at step {step}", file=sys.stderr)
            if mlflow:
                mlflow.end_run(status="FAILED")
            return EXIT_NAN
        print(f"step: {step}")
        print(f"objective: {value:.10g}")
        if mlflow:
            mlflow.log_metrics({"objective": value}, step=step)
    if mlflow:
        mlflow.end_run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
