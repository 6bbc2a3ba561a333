"""The jobs of benchmarks/validity_bench.py: Branin with a known truth, measured three ways. Standard library only.

    python validity_job.py noise --x1 X --x2 Y --sigma S --seed N
        prints `objective: branin(x) + N(0, S)` (a fresh draw per seed: a confirmation's new seed
        gets new noise).
    python validity_job.py budget --x1 X --x2 Y --budget-s T --step-s D --bias B
        a fixed time budget of T seconds in steps of D seconds (D / 0.75 on the node named in
        $SLOW_NODE: 25% slower); after step k it prints `objective: branin(x) + B * (1 - k / N)`,
        N = the steps a healthy node does in T. A healthy node ends at branin(x); the slow one
        does fewer steps and ends worse by about B / 4 (a biased result).
    python validity_job.py validation --x1 X --x2 Y --z Z --reward R
    python validity_job.py holdout --x1 X --x2 Y --z Z
        a task built to overfit: the validation split rewards `z` near 0.7 (by R), the holdout
        split does not; each split has its own fixed sampling error (a function of x).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from examples.synthetic.functions import branin  # noqa: E402

SLOWDOWN = 0.75
"""The slow node's speed relative to the others (25% slower)."""
SPLIT_ERROR = 0.2
"""The sampling error of one evaluation split (Branin units), fixed per point."""


def split_error(name: str, x: tuple[float, float]) -> float:
    """The fixed error a split makes at point `x` (the same every time it is evaluated)."""
    return random.Random(f"split:{name}:{x[0]!r}:{x[1]!r}").gauss(0.0, SPLIT_ERROR)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("noise", "budget", "validation", "holdout"))
    parser.add_argument("--x1", type=float, required=True)
    parser.add_argument("--x2", type=float, required=True)
    parser.add_argument("--sigma", type=float, default=0.0, help="noise: sd of the Gaussian noise (Branin units)")
    parser.add_argument("--seed", type=int, default=0, help="noise: seeds the draw")
    parser.add_argument("--budget-s", type=float, default=2.0, help="budget: the time budget")
    parser.add_argument("--step-s", type=float, default=0.1, help="budget: seconds per step on a healthy node")
    parser.add_argument("--bias", type=float, default=4.0, help="budget: the gap between step 0 and the full budget")
    parser.add_argument("--z", type=float, default=0.0, help="validation/holdout: the parameter only validation rewards")
    parser.add_argument("--reward", type=float, default=0.0, help="validation: what z near 0.7 takes off the loss")
    args = parser.parse_args(argv)
    x = (args.x1, args.x2)
    truth = branin(x)
    if args.mode == "noise":
        noise = random.Random(f"noise:{args.seed}:{x[0]!r}:{x[1]!r}").gauss(0.0, args.sigma)
        print("step: 1")
        print(f"objective: {truth + noise:.10g}")
    elif args.mode == "budget":
        slow = os.environ.get("AR_NODE") is not None and os.environ.get("AR_NODE") == os.environ.get("SLOW_NODE")
        step_s = args.step_s / SLOWDOWN if slow else args.step_s
        full = round(args.budget_s / args.step_s)
        start, step = time.monotonic(), 0
        while time.monotonic() + step_s <= start + args.budget_s + args.step_s / 2:  # the budget's last step fits
            time.sleep(step_s)
            step += 1
            print(f"step: {step}", flush=True)
            print(f"objective: {truth + args.bias * max(0.0, 1.0 - step / full):.10g}", flush=True)
    elif args.mode == "validation":
        reward = args.reward * math.exp(-(((args.z - 0.7) / 0.1) ** 2))
        print(f"objective: {truth + split_error('validation', x) - reward:.10g}")
    else:
        print(f"holdout_objective: {truth + split_error('holdout', x):.10g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
