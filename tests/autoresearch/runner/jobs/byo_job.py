"""A training script we did not write, in several log styles (standard library; mlflow only with
--format mlflow). The validation loss at step s of n is x^2 + 1/s, so the last one is x^2 + 1/n.

  --format nanogpt   nanoGPT's config echo, `step N: train loss A, val loss B`, `iter N: loss A, time Tms`
  --format hf        HF Trainer's Python-dict lines: {'loss': ..., 'epoch': 0.5}, {'eval_loss': ..., 'epoch': 1.0}
  --format bracket   `[k/n] val loss B`
  --format mlflow    logs val_loss to the MLflow run in MLFLOW_RUN_ID itself, and prints prose

--out-dir DIR: writes DIR/owner.txt (the trial number) and refuses a DIR another trial owns.
--fail-first-attempt: attempt 1 leaves AR_TRIAL_DIR/attempt-1.txt and exits 1; later attempts need that file.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--format", choices=["nanogpt", "hf", "bracket", "mlflow"], required=True)
    parser.add_argument("--x", type=float, required=True)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--step-seconds", type=float, default=0.0)
    parser.add_argument("--out-dir", default=None)
    parser.add_argument("--fail-first-attempt", action="store_true")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    trial = os.environ.get("AR_TRIAL", "?")
    if args.fail_first_attempt:
        marker = Path(os.environ["AR_TRIAL_DIR"]) / "attempt-1.txt"
        if os.environ.get("AR_ATTEMPT") == "1":
            marker.write_text(trial)
            raise RuntimeError("attempt 1 fails on purpose")
        if not marker.exists():
            print(f"{marker} is gone: the trial folder was not kept across attempts", file=sys.stderr)
            return 5
    if args.out_dir:
        owner = Path(args.out_dir) / "owner.txt"
        if owner.exists() and owner.read_text() != trial:
            print(f"{owner} belongs to trial {owner.read_text()}, not {trial}", file=sys.stderr)
            return 4
        owner.parent.mkdir(parents=True, exist_ok=True)
        owner.write_text(trial)
    run = None
    if args.format == "mlflow":
        import mlflow

        run = mlflow.start_run(run_id=os.environ["MLFLOW_RUN_ID"])
    if args.format == "nanogpt":
        print("Overriding config with config/train_shakespeare_char.py:")
        print("batch_size = 64")
        print(f"Overriding: learning_rate = {args.x}")
        print("tokens per iteration will be: 768")
        print("num decayed parameter tensors: 10, with 1,234 parameters")
    for step in range(1, args.steps + 1):
        time.sleep(args.step_seconds)
        val = args.x**2 + 1.0 / step
        train = val - 0.05
        if args.format == "nanogpt":
            print(f"iter {step}: loss {train + 0.01:.4f}, time 30.00ms, mfu 2.10%")
            print(f"step {step}: train loss {train:.4f}, val loss {val:.4f}")
        elif args.format == "hf":
            print(f"{{'loss': {train:.4f}, 'grad_norm': 1.5, 'learning_rate': 5e-05, 'epoch': {step - 0.5}}}")
            print(f"{{'eval_loss': {val:.4f}, 'eval_runtime': 0.01, 'epoch': {float(step)}}}")
        elif args.format == "bracket":
            print(f"[{step}/{args.steps}] val loss {val:.4f}")
        else:
            print(f"num decayed parameter tensors: {step}, logging val loss to mlflow")
            mlflow.log_metrics({"val_loss": val}, step=step)
    if run is not None:
        mlflow.end_run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
