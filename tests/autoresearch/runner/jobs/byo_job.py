"""A training script we did not write, in several log styles (standard library; mlflow only with
--format mlflow). The validation loss at step s of n is x^2 + 1/s, so the last one is x^2 + 1/n.

  --format nanogpt   what nanoGPT's train.py prints, exactly: its config file echoed, `Overriding: key = value`,
                     `step N: train loss A, val loss B`, `iter N: loss A, time Tms, mfu M%`
  --format hf        HF Trainer 4.x's Python-dict lines: {'loss': ..., 'epoch': 0.5}, {'eval_loss': ..., 'epoch': 1.0}
  --format hf5       what transformers 5.x Trainer prints, exactly: numbers as quoted strings (`.4g`), after
                     tqdm progress bars on stderr, and the final {'train_runtime': ..., 'train_loss': ...}
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
    parser.add_argument("--format", choices=["nanogpt", "hf", "hf5", "bracket", "mlflow"], required=True)
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
        nanogpt_preamble(args.x)
    if args.format == "hf5":
        return hf5(args.x, args.steps, args.step_seconds)
    for step in range(1, args.steps + 1):
        time.sleep(args.step_seconds)
        val = args.x**2 + 1.0 / step
        train = val - 0.05
        if args.format == "nanogpt":
            print(f"step {step}: train loss {train:.4f}, val loss {val:.4f}")
            print("saving checkpoint to out-shakespeare-char")
            print(f"iter {step}: loss {train + 0.01:.4f}, time {30 + step / 100:.2f}ms, mfu {2 + step / 100:.2f}%")
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


NANOGPT_CONFIG = """\
# train a miniature character-level shakespeare model
# good for debugging and playing on macbooks and such

out_dir = 'out-shakespeare-char'
eval_interval = 250 # keep frequent because we'll overfit
eval_iters = 200
log_interval = 10 # don't print too too often

# we expect to overfit on this small dataset, so only save when val improves
always_save_checkpoint = False

wandb_log = False # override via command line if you like
wandb_project = 'shakespeare-char'
wandb_run_name = 'mini-gpt'

dataset = 'shakespeare_char'
gradient_accumulation_steps = 1
batch_size = 64
block_size = 256 # context of up to 256 previous characters

# baby GPT model :)
n_layer = 6
n_head = 6
n_embd = 384
dropout = 0.2

learning_rate = 1e-3 # with baby networks can afford to go a bit higher
max_iters = 5000
lr_decay_iters = 5000 # make equal to max_iters usually
min_lr = 1e-4 # learning_rate / 10 usually
beta2 = 0.99 # make a bit bigger because number of tokens per iter is small

warmup_iters = 100 # not super necessary potentially

# on macbook also add
# device = 'cpu'  # run on cpu only
# compile = False # do not torch compile the model
"""
"""nanoGPT's config/train_shakespeare_char.py, which its configurator.py prints whole."""


def nanogpt_preamble(x: float) -> None:
    """nanoGPT's train.py, configurator.py and model.py output before the first eval (CPU, no compile)."""
    print("Overriding config with config/train_shakespeare_char.py:")
    print(NANOGPT_CONFIG)
    for key, value in (("device", "cpu"), ("compile", False), ("eval_iters", 20), ("dropout", 0.13),
                       ("learning_rate", x)):  # fmt: skip
        print(f"Overriding: {key} = {value}")
    print("tokens per iteration will be: 16,384")
    print("found vocab_size = 65 (inside data/shakespeare_char/meta.pkl)")
    print("Initializing a new model from scratch")
    print("number of parameters: 10.65M")
    print("num decayed parameter tensors: 26, with 10,740,096 parameters")
    print("num non-decayed parameter tensors: 13, with 4,992 parameters")
    print("using fused AdamW: False")


BLOCK = "\u2588"


def hf5(x: float, steps: int, step_seconds: float) -> int:
    """transformers 5.x `Trainer.train()` with `eval_strategy="epoch"`, two optimizer steps per epoch and
    `logging_steps=1`: its ProgressCallback writes tqdm bars to stderr (`\\r`, no newline) and `str(logs)`
    to stdout, floats formatted with `.4g`; the stdout lines land after a bar on the same log line."""
    total = 2 * steps

    def bar(n: int, end: str = "") -> None:
        bar_text = (BLOCK * (n * 10 // total)).ljust(10)
        rate = "?it/s" if n == 0 else f"{3.1 + n / 10:.2f}it/s"
        sys.stderr.write(f"\r{n * 100 // total:3d}%|{bar_text}| {n}/{total} [00:0{min(n, 9)}<00:0{min(total - n, 9)}, "
                         f"{rate}]{end}")
        sys.stderr.flush()

    def log(values: dict[str, float]) -> None:
        print({key: f"{value:.4g}" if isinstance(value, float) else value for key, value in values.items()})

    bar(0)
    losses = []
    for step in range(1, steps + 1):
        for half in (1, 2):
            time.sleep(step_seconds / 2)
            n = 2 * (step - 1) + half
            bar(n)
            loss = x**2 + 1.0 / step + 0.5 / half
            losses.append(loss)
            log({"loss": loss, "grad_norm": 1.2 / n, "learning_rate": 5e-05 * (1 - n / total), "epoch": n / 2})
        sys.stderr.write(f"\n\r  0%|          | 0/2 [00:00<?, ?it/s]\x1b[A\n\r100%|{BLOCK * 10}| 2/2 [00:00<00:00, "
                         f"40.1it/s]\x1b[A\n\r{' ' * 50}\r\x1b[A")  # the evaluation's bar, cleared (leave=False)
        sys.stderr.flush()
        log({"eval_loss": round(x**2 + 1.0 / step, 4), "eval_runtime": 0.0629, "eval_samples_per_second": 254.4,
             "eval_steps_per_second": 31.8, "epoch": float(step)})  # fmt: skip
    log({"train_runtime": 1.2345, "train_samples_per_second": 12.97, "train_steps_per_second": 1.621,
         "train_loss": sum(losses) / len(losses), "epoch": float(steps)})  # fmt: skip
    bar(total, "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
