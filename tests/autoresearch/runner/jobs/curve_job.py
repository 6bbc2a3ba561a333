"""A job that prints a known curve (standard library only): `step: N` then `objective: V` for each
value of --curve, one step every --step-seconds; trials listed in --other-trials print --other-curve
instead. After its last step it lingers --linger seconds (a teardown, like an MLflow run being
ended) and exits 0 even if SIGTERM came then; SIGTERM during the steps exits 143.

    python curve_job.py --trial 3 --curve 5,1,3,2 --other-trials 1,3 --other-curve 9,9,9,9
"""

from __future__ import annotations

import argparse
import signal
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trial", type=int, required=True)
    parser.add_argument("--x", type=float, default=0.0, help="ignored (a search space needs a parameter)")
    parser.add_argument("--curve", required=True)
    parser.add_argument("--other-trials", default="")
    parser.add_argument("--other-curve", default="")
    parser.add_argument("--step-seconds", type=float, default=0.0)
    parser.add_argument("--linger", type=float, default=0.0)
    args = parser.parse_args()
    others = {int(n) for n in args.other_trials.split(",") if n}
    curve = args.other_curve if args.trial in others else args.curve
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    stop = {"requested": False}
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.update(requested=True))
    for step, value in enumerate((float(v) for v in curve.split(",")), start=1):
        deadline = time.monotonic() + args.step_seconds
        while not stop["requested"] and time.monotonic() < deadline:
            time.sleep(0.02)
        if stop["requested"]:
            return 143
        print(f"step: {step}")
        print(f"objective: {value}")
    time.sleep(args.linger)  # the teardown: a stop asked for now changes nothing, the job has ended its work
    return 0


if __name__ == "__main__":
    sys.exit(main())
