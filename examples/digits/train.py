"""Train a one-hidden-layer MLP on scikit-learn's bundled digits dataset (8x8 images, 10 classes).

Numpy only: the forward pass, the backward pass and Adam are written out below. Seconds per
run on a CPU, no download. It follows the contract every autoresearch training job keeps:

- prints `key: value` lines, one metric per line, each group after an `epoch: N` line;
  the last line is the final result, `val_accuracy: X`;
- logs params and per-epoch metrics to MLflow when MLFLOW_RUN_ID is set (mlflow is imported
  only then; `--no-mlflow` skips it, and the runner reads the printed metrics instead);
- on SIGTERM saves a checkpoint into AR_CHECKPOINT_DIR (when set) and exits with code 143;
  a later run with the same AR_CHECKPOINT_DIR resumes at the saved batch and ends with the
  same result as an uninterrupted run (everything random is derived from --seed);
- exits with code 3 and a `nan guard: ...` message on a NaN or infinite loss;
- bad arguments exit with code 2 (argparse).

    python train.py --lr 0.003 --hidden 64 --activation relu
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

EXIT_SIGTERM = 143  # 128 + SIGTERM: the conventional "stopped by SIGTERM" status
EXIT_NAN = 3
CHECKPOINT_NAME = "digits-checkpoint.npz"
SPLIT_SEED = 0  # the validation split is fixed, whatever --seed is: trials stay comparable
# Arguments that change the result; a checkpoint written with other values is refused.
RESULT_ARGS = ("lr", "hidden", "activation", "epochs", "batch_size", "seed")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam learning rate (default 3e-3)")
    parser.add_argument("--hidden", type=int, default=64, help="hidden units (default 64)")
    parser.add_argument("--activation", choices=["relu", "tanh"], default="relu")
    parser.add_argument("--epochs", type=int, default=20, help="passes over the training set (default 20)")
    parser.add_argument("--batch-size", type=int, default=32, help="minibatch size (default 32)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the initialisation and the shuffling")
    parser.add_argument("--epoch-delay", type=float, default=0.0,
                        help="seconds to sleep after each epoch, to make runs long enough to watch or preempt")
    parser.add_argument("--no-mlflow", action="store_true",
                        help="do not log to MLflow even with MLFLOW_RUN_ID set (the printed lines still carry the metrics)")
    args = parser.parse_args(argv)
    for name in ("lr", "hidden", "epochs", "batch_size"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if args.epoch_delay < 0:
        parser.error(f"--epoch-delay must be >= 0, got {args.epoch_delay}")
    return args


# ---------------------------------------------------------------- data and model

def load_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The digits dataset, scaled to [0, 1], split 80/20 (stratified, fixed seed)."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float64)
    return train_test_split(x, digits.target, test_size=0.2, random_state=SPLIT_SEED, stratify=digits.target)


def init_params(n_in: int, hidden: int, n_out: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "w1": rng.normal(0.0, np.sqrt(2.0 / n_in), size=(n_in, hidden)),
        "b1": np.zeros(hidden),
        "w2": rng.normal(0.0, np.sqrt(1.0 / hidden), size=(hidden, n_out)),
        "b2": np.zeros(n_out),
    }


def forward(params: dict[str, np.ndarray], x: np.ndarray, activation: str) -> tuple[np.ndarray, np.ndarray]:
    """Returns (hidden activations, class probabilities)."""
    pre = x @ params["w1"] + params["b1"]
    h = np.maximum(pre, 0.0) if activation == "relu" else np.tanh(pre)
    logits = h @ params["w2"] + params["b2"]
    logits = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(logits)
    probs /= probs.sum(axis=1, keepdims=True)
    return h, probs


def cross_entropy(probs: np.ndarray, y: np.ndarray) -> float:
    return float(-np.mean(np.log(probs[np.arange(len(y)), y] + 1e-12)))


def gradients(params, x, y, activation):
    """Mean cross-entropy loss of the batch and its gradient for each parameter."""
    h, probs = forward(params, x, activation)
    loss = cross_entropy(probs, y)
    d_logits = probs.copy()
    d_logits[np.arange(len(y)), y] -= 1.0
    d_logits /= len(y)
    d_h = d_logits @ params["w2"].T
    d_pre = d_h * (h > 0) if activation == "relu" else d_h * (1.0 - h * h)
    grads = {"w2": h.T @ d_logits, "b2": d_logits.sum(axis=0), "w1": x.T @ d_pre, "b1": d_pre.sum(axis=0)}
    return loss, grads


def adam_update(params, grads, m, v, t: int, lr: float, beta1=0.9, beta2=0.999, eps=1e-8) -> None:
    for key in params:
        m[key] = beta1 * m[key] + (1 - beta1) * grads[key]
        v[key] = beta2 * v[key] + (1 - beta2) * grads[key] ** 2
        m_hat = m[key] / (1 - beta1**t)
        v_hat = v[key] / (1 - beta2**t)
        params[key] -= lr * m_hat / (np.sqrt(v_hat) + eps)


# ---------------------------------------------------------------- checkpoints

def save_checkpoint(path: Path, state: dict, args: argparse.Namespace) -> None:
    """Write the whole training state atomically (a crash mid-write leaves the old file)."""
    arrays = {f"{group}.{key}": value for group in ("params", "m", "v") for key, value in state[group].items()}
    meta = {"epoch": state["epoch"], "batch": state["batch"], "t": state["t"], "loss_sum": state["loss_sum"],
            "args": {name: getattr(args, name) for name in RESULT_ARGS}}
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, meta=np.array(json.dumps(meta)), **arrays)
    os.replace(tmp, path)


def load_checkpoint(path: Path, args: argparse.Namespace) -> dict | None:
    if not path.exists():
        return None
    with np.load(path) as data:
        meta = json.loads(str(data["meta"]))
        wanted = {name: getattr(args, name) for name in RESULT_ARGS}
        if meta["args"] != wanted:
            print(f"checkpoint {path} was written with other arguments {meta['args']}, not {wanted}: "
                  "point AR_CHECKPOINT_DIR at a fresh folder (or delete the checkpoint) to start over",
                  file=sys.stderr)
            sys.exit(2)
        state = {group: {} for group in ("params", "m", "v")}
        for name in data.files:
            if name != "meta":
                group, key = name.split(".", 1)
                state[group][key] = data[name].copy()
    state.update(epoch=meta["epoch"], batch=meta["batch"], t=meta["t"], loss_sum=meta["loss_sum"])
    return state


# ---------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # log parsers read the file while we run
    stop = {"requested": False}
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.update(requested=True))

    ckpt_dir = os.environ.get("AR_CHECKPOINT_DIR")
    ckpt_path = Path(ckpt_dir) / CHECKPOINT_NAME if ckpt_dir else None

    x_train, x_val, y_train, y_val = load_data()
    state = load_checkpoint(ckpt_path, args) if ckpt_path else None
    if state is None:
        params = init_params(x_train.shape[1], args.hidden, 10, args.seed)
        state = {"params": params, "m": {k: np.zeros_like(p) for k, p in params.items()},
                 "v": {k: np.zeros_like(p) for k, p in params.items()}, "epoch": 1, "batch": 0, "t": 0,
                 "loss_sum": 0.0}
    else:
        print(f"resumed from {ckpt_path} at epoch {state['epoch']} batch {state['batch']}", file=sys.stderr)

    mlflow = None
    if os.environ.get("MLFLOW_RUN_ID") and not args.no_mlflow:
        import mlflow  # only when a run was handed to us: a plain run stays import-light

        mlflow.start_run(run_id=os.environ["MLFLOW_RUN_ID"])
        mlflow.log_params({name: getattr(args, name) for name in RESULT_ARGS})

    n_batches = -(-len(x_train) // args.batch_size)
    started = time.monotonic()
    while state["epoch"] <= args.epochs:
        epoch = state["epoch"]
        # The shuffle of an epoch depends only on (seed, epoch): a resumed run sees the same batches.
        order = np.random.default_rng([args.seed, epoch]).permutation(len(x_train))
        while state["batch"] < n_batches:
            if stop["requested"]:
                return _stop(ckpt_path, state, args, mlflow)
            idx = order[state["batch"] * args.batch_size:(state["batch"] + 1) * args.batch_size]
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                loss, grads = gradients(state["params"], x_train[idx], y_train[idx], args.activation)
            state["t"] += 1
            if not np.isfinite(loss):
                return _nan_guard(loss, state["t"], epoch, mlflow)
            with np.errstate(over="ignore", invalid="ignore"):
                adam_update(state["params"], grads, state["m"], state["v"], state["t"], args.lr)
            state["loss_sum"] += loss
            state["batch"] += 1

        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            _, probs = forward(state["params"], x_val, args.activation)
        metrics = {
            "train_loss": state["loss_sum"] / n_batches,
            "val_loss": cross_entropy(probs, y_val),
            "val_accuracy": float(np.mean(probs.argmax(axis=1) == y_val)),
        }
        if not np.isfinite(metrics["val_loss"]):
            return _nan_guard(metrics["val_loss"], state["t"], epoch, mlflow)
        print(f"epoch: {epoch}")
        for key, value in metrics.items():  # val_accuracy last: the final line is the result
            print(f"{key}: {value:.6f}")
        if mlflow:
            mlflow.log_metrics(metrics, step=epoch)
        state.update(epoch=epoch + 1, batch=0, loss_sum=0.0)
        if args.epoch_delay:
            time.sleep(args.epoch_delay)

    print(f"train seconds {time.monotonic() - started:.2f}", file=sys.stderr)
    if mlflow:
        mlflow.end_run()
    return 0


def _stop(ckpt_path: Path | None, state: dict, args: argparse.Namespace, mlflow) -> int:
    if ckpt_path:
        ckpt_path.parent.mkdir(parents=True, exist_ok=True)
        save_checkpoint(ckpt_path, state, args)
        print(f"sigterm: checkpoint saved to {ckpt_path} at epoch {state['epoch']} batch {state['batch']}",
              file=sys.stderr)
    else:
        print("sigterm: stopping (no AR_CHECKPOINT_DIR, nothing saved)", file=sys.stderr)
    if mlflow:
        mlflow.end_run(status="KILLED")
    return EXIT_SIGTERM


def _nan_guard(loss: float, step: int, epoch: int, mlflow) -> int:
    print(f"nan guard: loss is {loss} at step {step} (epoch {epoch})", file=sys.stderr)
    if mlflow:
        mlflow.end_run(status="FAILED")
    return EXIT_NAN


if __name__ == "__main__":
    sys.exit(main())
