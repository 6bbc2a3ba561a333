"""A job whose value is known plus seeded noise (standard library): arm A's true value is
`--base + A`, read with Gaussian noise of scale `--sigma` drawn from `--seed`. It prints
`objective: V` (steps 1..3, the last the result) and the seeds it was given."""

from __future__ import annotations

import argparse
import os
import random


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--arm", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--base", type=float, default=0.0)
    parser.add_argument("--sigma", type=float, default=0.05)
    args = parser.parse_args()
    value = args.base + args.arm + random.Random(f"noise:{args.seed}").gauss(0.0, args.sigma)
    print(f"seed {args.seed}, AR_SEED {os.environ.get('AR_SEED')}", flush=True)
    for step in (1, 2, 3):
        print(f"step: {step}\nobjective: {value if step == 3 else value - 1.0 / step!r}", flush=True)


if __name__ == "__main__":
    main()
