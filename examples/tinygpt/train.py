"""tinygpt: a small byte-level GPT trained for a fixed wall-clock budget on Python's own sources.

Read top to bottom: arguments, model, checkpoints, training loop. The data and the metric live
in evaluation.py, which is FIXED (campaigns may let an LLM edit this file, never that one).

It keeps the contract of every autoresearch training job:
- `key: value` lines, one metric per line, each group after a `step: N` line; `val_bpb: X` at
  every evaluation and as the very last line (the final result);
- params and metrics go to MLflow when MLFLOW_RUN_ID is set (mlflow is imported only then);
- SIGTERM saves a checkpoint into AR_CHECKPOINT_DIR (when set) and exits 143; the next run
  with that folder resumes at the saved step with the rest of the time budget;
- a NaN or infinite loss exits with code 3 (`nan guard: ...`); bad arguments exit 2.

CUDA when available (bf16 autocast where supported), else the CPU.

    python train.py --time-budget 60 --width 128 --depth 4 --batch-size 32 --lr 3e-3
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from evaluation import SEQ_LEN, VOCAB_SIZE, corpus_summary, evaluate_bpb, load_splits, unigram_bpb

EXIT_SIGTERM = 143
EXIT_NAN = 3
CHECKPOINT_NAME = "tinygpt-checkpoint.pt"
# Arguments that shape the model or the data order; a checkpoint written with others is refused.
SHAPE_ARGS = ("width", "depth", "head_dim", "batch_size", "seed")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--time-budget", type=float, default=60.0, help="seconds of training (default 60)")
    p.add_argument("--width", type=int, default=128, help="embedding width (default 128)")
    p.add_argument("--depth", type=int, default=4, help="transformer blocks (default 4)")
    p.add_argument("--head-dim", type=int, default=32, help="width of one attention head (default 32)")
    p.add_argument("--batch-size", type=int, default=32, help="sequences per step (default 32)")
    p.add_argument("--lr", type=float, default=3e-3, help="peak AdamW learning rate (default 3e-3)")
    p.add_argument("--warmup", type=int, default=50, help="linear warmup steps (default 50)")
    p.add_argument("--weight-decay", type=float, default=0.1, help="AdamW weight decay on matrices (default 0.1)")
    p.add_argument("--eval-every", type=float, default=10.0, help="seconds of training between evals (default 10)")
    p.add_argument("--log-every", type=int, default=50, help="steps between train_loss lines (default 50)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    args = p.parse_args(argv)
    for name in ("time_budget", "width", "depth", "head_dim", "batch_size", "lr", "eval_every", "log_every"):
        if getattr(args, name) <= 0:
            p.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    if args.width % args.head_dim:
        p.error(f"--width {args.width} must be a multiple of --head-dim {args.head_dim}")
    if args.warmup < 0 or args.weight_decay < 0:
        p.error("--warmup and --weight-decay must be >= 0")
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda, but torch sees no CUDA device")
    return args


# ---------------------------------------------------------------- model

class Block(nn.Module):
    def __init__(self, width: int, head_dim: int):
        super().__init__()
        self.heads = width // head_dim
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.mlp(self.ln2(x))


class TinyGPT(nn.Module):
    def __init__(self, width: int, depth: int, head_dim: int):
        super().__init__()
        self.tok = nn.Embedding(VOCAB_SIZE, width)
        self.pos = nn.Embedding(SEQ_LEN, width)
        self.blocks = nn.ModuleList(Block(width, head_dim) for _ in range(depth))
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, VOCAB_SIZE, bias=False)
        self.head.weight = self.tok.weight  # tied input and output embeddings
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


def make_optimizer(model: nn.Module, args: argparse.Namespace) -> torch.optim.Optimizer:
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    others = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": matrices, "weight_decay": args.weight_decay}, {"params": others, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=args.lr, betas=(0.9, 0.95))


def lr_at(step: int, progress: float, args: argparse.Namespace) -> float:
    """Linear warmup over --warmup steps, then cosine decay to 10% over the time budget."""
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress))))


# ---------------------------------------------------------------- checkpoints

def save_checkpoint(path: Path, model, optimizer, generator, step: int, train_time: float, args) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "data_rng": generator.get_state(),
                "step": step, "train_time": train_time, "args": {n: getattr(args, n) for n in SHAPE_ARGS}}, tmp)
    os.replace(tmp, path)


def load_checkpoint(path: Path, args) -> dict | None:
    if not path.exists():
        return None
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    wanted = {n: getattr(args, n) for n in SHAPE_ARGS}
    if ckpt["args"] != wanted:
        print(f"checkpoint {path} was written with {ckpt['args']}, not {wanted}: point AR_CHECKPOINT_DIR at a "
              "fresh folder (or delete the checkpoint) to start over", file=sys.stderr)
        sys.exit(2)
    return ckpt


# ---------------------------------------------------------------- training

def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # log parsers read the file while we run
    stop = {"requested": False}
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.update(requested=True))

    device = torch.device("cuda" if args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
                          else "cpu")
    use_bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(args.seed)

    train_bytes, val_bytes = load_splits()
    print(corpus_summary(train_bytes, val_bytes), file=sys.stderr)
    train_data = torch.frombuffer(bytearray(train_bytes), dtype=torch.uint8).to(device)  # 1.3 MB: keep it there
    window = torch.arange(SEQ_LEN + 1, device=device)
    baseline = unigram_bpb(train_bytes, val_bytes)

    model = TinyGPT(args.width, args.depth, args.head_dim).to(device)
    optimizer = make_optimizer(model, args)
    generator = torch.Generator().manual_seed(args.seed)  # batch offsets: restored on resume
    step, train_time = 0, 0.0

    ckpt_dir = os.environ.get("AR_CHECKPOINT_DIR")
    ckpt_path = Path(ckpt_dir) / CHECKPOINT_NAME if ckpt_dir else None
    ckpt = load_checkpoint(ckpt_path, args) if ckpt_path else None
    if ckpt:
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        generator.set_state(ckpt["data_rng"])
        step, train_time = ckpt["step"], ckpt["train_time"]
        print(f"resumed from {ckpt_path} at step {step} after {train_time:.1f} s of training", file=sys.stderr)

    mlflow = None
    if os.environ.get("MLFLOW_RUN_ID"):
        import mlflow  # only when a run was handed to us

        mlflow.start_run(run_id=os.environ["MLFLOW_RUN_ID"])
        mlflow.log_params({k: v for k, v in vars(args).items() if k not in ("eval_every", "log_every")})

    def report(metrics: dict[str, float]) -> None:
        print(f"step: {step}")
        for key, value in metrics.items():
            print(f"{key}: {value:.6g}" if isinstance(value, float) else f"{key}: {value}")
        if mlflow:
            mlflow.log_metrics(metrics, step=step)

    def evaluate() -> float:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16):
            return evaluate_bpb(model, val_bytes, device)

    def finish(code: int, status: str) -> int:
        if mlflow:
            mlflow.end_run(status=status)
        return code

    num_params = sum(p.numel() for p in model.parameters())
    report({"num_params": num_params, "unigram_bpb": baseline})
    print(f"device {device}, bf16 autocast {use_bf16}, {num_params} parameters", file=sys.stderr)

    tokens_per_step = args.batch_size * SEQ_LEN
    attempt_tokens, attempt_time, loss_sum, loss_count = 0, 0.0, 0.0, 0
    next_eval = (math.floor(train_time / args.eval_every) + 1) * args.eval_every
    while train_time < args.time_budget:
        if stop["requested"]:
            if ckpt_path:
                save_checkpoint(ckpt_path, model, optimizer, generator, step, train_time, args)
                print(f"sigterm: checkpoint saved to {ckpt_path} at step {step}", file=sys.stderr)
            else:
                print("sigterm: stopping (no AR_CHECKPOINT_DIR, nothing saved)", file=sys.stderr)
            return finish(EXIT_SIGTERM, "KILLED")

        t0 = time.perf_counter()
        starts = torch.randint(len(train_data) - SEQ_LEN - 1, (args.batch_size,), generator=generator)
        chunk = train_data[starts.to(device)[:, None] + window].long()  # (batch, SEQ_LEN + 1)
        x, y = chunk[:, :-1], chunk[:, 1:]
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step, train_time / args.time_budget, args)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16):
            logits = model(x)
        loss = F.cross_entropy(logits.float().view(-1, VOCAB_SIZE), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss_value = loss.item()  # also waits for the GPU, so the timing below is honest
        step += 1
        if not math.isfinite(loss_value):
            print(f"nan guard: loss is {loss_value} at step {step}", file=sys.stderr)
            return finish(EXIT_NAN, "FAILED")
        dt = time.perf_counter() - t0
        train_time += dt
        attempt_time += dt
        attempt_tokens += tokens_per_step
        loss_sum, loss_count = loss_sum + loss_value, loss_count + 1

        if train_time >= args.time_budget:
            break  # the final report below covers this step
        if step % args.log_every == 0 or train_time >= next_eval:
            metrics = {"train_loss": loss_sum / loss_count, "tokens_per_s": attempt_tokens / attempt_time}
            loss_sum, loss_count = 0.0, 0
            if train_time >= next_eval:
                metrics["val_bpb"] = evaluate()
                next_eval += args.eval_every
            report(metrics)

    final = {"train_seconds": train_time, "tokens_per_s": attempt_tokens / max(attempt_time, 1e-9),
             "unigram_bpb": baseline}
    if loss_count:
        final = {"train_loss": loss_sum / loss_count, **final}
    final["val_bpb"] = evaluate()  # last: the final result
    report(final)
    return finish(0, "FINISHED")


if __name__ == "__main__":
    sys.exit(main())
