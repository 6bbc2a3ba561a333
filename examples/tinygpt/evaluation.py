"""FIXED: the data and the evaluation of the tinygpt example. Do not edit.

Campaigns list this file under `code.fixed`: an LLM may rewrite train.py, never this, so every
trial's val_bpb is measured the same way and results stay comparable.

- Corpus: a fixed list of the Python standard library's own source files, read from the running
  interpreter's stdlib folder (no download; the text differs a little between Python versions,
  so compare numbers within one interpreter: `corpus_summary()` names it).
- Split: the first 90% of each file's bytes go to train, the last 10% to validation.
- Tokens are bytes (vocabulary 256), so the cross-entropy in bits is bits per byte (bpb).
- `evaluate_bpb` scores the first EVAL_BYTES bytes of the validation split in windows of SEQ_LEN.
- `unigram_bpb` is the baseline: byte frequencies of train (add-one smoothed) on the same bytes.
"""

from __future__ import annotations

import hashlib
import math
import sysconfig
from collections import Counter
from pathlib import Path

import torch
import torch.nn.functional as F

VOCAB_SIZE = 256
SEQ_LEN = 128  # context length of a training sequence and of an evaluation window
VAL_FRACTION = 0.1
EVAL_BYTES = 32_768
CORPUS_FILES = (
    "argparse.py", "ast.py", "base64.py", "bisect.py", "calendar.py", "collections/__init__.py",
    "contextlib.py", "copy.py", "csv.py", "dataclasses.py", "difflib.py", "enum.py", "fractions.py",
    "functools.py", "heapq.py", "inspect.py", "json/decoder.py", "json/encoder.py",
    "logging/__init__.py", "os.py", "random.py", "shutil.py", "statistics.py", "string.py",
    "subprocess.py", "tempfile.py", "textwrap.py", "threading.py", "typing.py", "uuid.py", "weakref.py",
)


def stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def load_splits() -> tuple[bytes, bytes]:
    """(train, val) bytes of the corpus: per file, the first 90% to train and the rest to val."""
    root = stdlib_dir()
    missing = [name for name in CORPUS_FILES if not (root / name).is_file()]
    if missing:
        raise FileNotFoundError(f"the tinygpt corpus needs {missing} in this interpreter's stdlib folder {root}; "
                                "run with a CPython that ships its .py sources")
    train, val = [], []
    for name in CORPUS_FILES:
        data = (root / name).read_bytes()
        cut = int(len(data) * (1 - VAL_FRACTION))
        train.append(data[:cut])
        val.append(data[cut:])
    return b"".join(train), b"".join(val)


def corpus_summary(train: bytes, val: bytes) -> str:
    digest = hashlib.sha256(train + val).hexdigest()[:12]
    # Worded without `key: number` pairs, so log parsers do not take it for a metric.
    return (f"corpus of {len(CORPUS_FILES)} stdlib files from {stdlib_dir()} "
            f"({len(train)} train bytes, {len(val)} val bytes, sha256 {digest})")


def _eval_windows(val: bytes) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets of the scored windows, each (n_windows, SEQ_LEN)."""
    n_windows = min(EVAL_BYTES, len(val) - 1) // SEQ_LEN
    data = torch.frombuffer(bytearray(val[: n_windows * SEQ_LEN + 1]), dtype=torch.uint8).long()
    inputs = data[:-1].view(n_windows, SEQ_LEN)
    targets = data[1:].view(n_windows, SEQ_LEN)
    return inputs, targets


@torch.no_grad()
def evaluate_bpb(model: torch.nn.Module, val: bytes, device: torch.device | str, batch_size: int = 64) -> float:
    """Bits per byte of `model` on the scored validation bytes. `model(idx)` returns logits (B, T, 256)."""
    inputs, targets = _eval_windows(val)
    was_training = model.training
    model.eval()
    total_nats = 0.0
    for i in range(0, len(inputs), batch_size):
        x = inputs[i:i + batch_size].to(device)
        y = targets[i:i + batch_size].to(device)
        logits = model(x).float()
        total_nats += F.cross_entropy(logits.view(-1, VOCAB_SIZE), y.view(-1), reduction="sum").item()
    model.train(was_training)
    return total_nats / targets.numel() / math.log(2)


def unigram_bpb(train: bytes, val: bytes) -> float:
    """The baseline: bits per byte of train's add-one-smoothed byte frequencies on the scored bytes."""
    counts = Counter(train)
    total = len(train) + VOCAB_SIZE
    _, targets = _eval_windows(val)
    scored = Counter(targets.view(-1).tolist())
    return -sum(n * math.log2((counts.get(b, 0) + 1) / total) for b, n in scored.items()) / targets.numel()
