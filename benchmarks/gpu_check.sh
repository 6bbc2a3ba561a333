#!/usr/bin/env bash
# GPU check: a short tinygpt hyperparameter campaign with one trial per GPU,
# run through `autoresearch run`. Prints tokens/s per trial, GPU utilisation sampled by
# nvidia-smi during the campaign, and the best val_bpb.
#
#   benchmarks/gpu_check.sh            # from the repository root
#
# Environment:
#   PYTHON             interpreter with the project and torch==2.13.0 (default: python3)
#   GPU_CHECK_BUDGET   training seconds per trial (default 30)
#   AUTORESEARCH_HOME  state dir (default: a fresh temporary one, so the check starts clean)
#   GPU_CHECK_ONLY     `smoke`: run only the multi-GPU smoke checks below, not the campaign
#   GPU_CHECK_CPU_SMOKE  `1` on a machine without GPUs: run the smoke checks on 2 CPU processes
#                      with gloo instead of saying "no GPU" (checks this script itself)
#
# With 2+ GPUs it first runs two smoke checks, each printing one PASS/FAIL line:
# a 1-node x N-GPU torchrun DDP job (benchmarks/ddp_smoke.py, nccl), and the gang preflight's
# all-reduce (compute/health/_gang_allreduce.py, nccl) between two members on GPUs 0 and 1.
#
# On a machine without NVIDIA GPUs it says so and exits 0. With GPUs that torch cannot use it
# exits 1. Otherwise it exits with the campaign's status (1 if a smoke check failed).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
BUDGET="${GPU_CHECK_BUDGET:-30}"

# smoke_checks NPROC BACKEND: the torchrun DDP smoke on NPROC processes, then the gang preflight
# between 2 members (one GPU each with nccl); prints one PASS/FAIL line each; returns 1 on a FAIL.
smoke_checks() {
    local nproc="$1" backend="$2" failed=0 out rc line port tmp
    tmp="$(mktemp -d -t gpu-smoke.XXXXXX)"
    rc=0
    out="$(cd "$tmp" && DDP_SMOKE_BACKEND="$backend" OMP_NUM_THREADS=1 timeout 300 "$PYTHON" -m torch.distributed.run \
        --standalone --nproc-per-node "$nproc" "$REPO/benchmarks/ddp_smoke.py" 2>&1)" || rc=$?
    line="$(grep '^ddp_smoke:' <<<"$out" | tail -n 1 || true)"
    if [ "$rc" -eq 0 ]; then
        echo "gpu_check: torchrun DDP smoke (1 node x $nproc, $backend): PASS -- $line"
    else
        echo "gpu_check: torchrun DDP smoke (1 node x $nproc, $backend): FAIL (exit $rc) -- ${line:-$(tail -n 5 <<<"$out")}"
        failed=1
    fi
    port="$("$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')" || port=29533
    local pids=() r codes=""
    for r in 0 1; do
        CUDA_VISIBLE_DEVICES="$r" "$PYTHON" "$REPO/compute/health/_gang_allreduce.py" --rank "$r" --world 2 \
            --addr 127.0.0.1 --port "$port" --backend "$backend" --timeout 60 --result "$tmp/rank$r.json" \
            -- true >"$tmp/rank$r.log" 2>&1 &
        pids+=("$!")
    done
    for r in 0 1; do
        rc=0
        wait "${pids[$r]}" || rc=$?
        codes="$codes $rc"
    done
    if [ "$codes" = " 0 0" ] && [ "$(grep -l '"skipped": false' "$tmp"/rank[01].json 2>/dev/null | wc -l)" -eq 2 ]; then
        echo "gpu_check: gang preflight all-reduce (2 members, $backend): PASS -- $(grep -h 'gang preflight' "$tmp/rank0.log")"
    else
        echo "gpu_check: gang preflight all-reduce (2 members, $backend): FAIL (exits$codes) --" \
             "$(cat "$tmp"/rank*.json 2>/dev/null || tail -n 5 "$tmp"/rank*.log)"
        failed=1
    fi
    rm -rf "$tmp"
    return "$failed"
}

if ! command -v nvidia-smi >/dev/null 2>&1; then
    if [ "${GPU_CHECK_CPU_SMOKE:-}" = 1 ]; then
        echo "gpu_check: no GPU on this machine; GPU_CHECK_CPU_SMOKE=1: the smoke checks on 2 CPU processes (gloo)"
        export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
        smoke_checks 2 gloo
        exit $?
    fi
    echo "gpu_check: no GPU on this machine (nvidia-smi not found); nothing to check"
    exit 0
fi
NGPU="$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)"
if [ "${NGPU:-0}" -eq 0 ]; then
    echo "gpu_check: no GPU on this machine (nvidia-smi lists none); nothing to check"
    exit 0
fi
if ! "$PYTHON" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "gpu_check: nvidia-smi lists $NGPU GPU(s) but torch in $PYTHON cannot use CUDA;" \
         "install the project's examples extra (torch==2.13.0) with CUDA support, or set PYTHON" >&2
    exit 1
fi

export AUTORESEARCH_HOME="${AUTORESEARCH_HOME:-$(mktemp -d -t autoresearch-gpu-check.XXXXXX)}"
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
WORK="$(mktemp -d -t gpu-check.XXXXXX)"
NAME="gpu-check-$(date +%Y%m%d-%H%M%S)"
echo "gpu_check: $NGPU GPU(s); campaign $NAME, $NGPU trial(s) of ${BUDGET} s; state in $AUTORESEARCH_HOME"

smoke=0
if [ "$NGPU" -ge 2 ]; then
    smoke_checks "$NGPU" nccl || smoke=1
else
    echo "gpu_check: torchrun DDP smoke and gang preflight: skipped (1 GPU; they need 2 or more)"
fi
if [ "${GPU_CHECK_ONLY:-}" = smoke ]; then
    exit "$smoke"
fi

# The hyperparameter config of examples/tinygpt, cut down to one round of one trial per GPU.
cat >"$WORK/campaign.yaml" <<EOF
name: $NAME
command: ["$PYTHON", "train.py", "--time-budget", "$BUDGET", "--lr", "{lr}", "--width", "{width}",
          "--depth", "{depth}", "--batch-size", "{batch_size}", "--warmup", "{warmup}", "--seed", "{seed}"]
cwd: $REPO/examples/tinygpt
objective: {metric: val_bpb, mode: min}
search_space:
  lr: {type: float, low: 1.0e-3, high: 1.0e-2, log: true}
  width: {type: categorical, choices: [256, 384, 512]}
  depth: {type: int, low: 4, high: 8}
  batch_size: {type: categorical, choices: [64, 128]}
  warmup: {type: int, low: 20, high: 200}
budget: {max_trials: $NGPU, max_parallel: $NGPU}
compute: {gpus: 1, priority: normal}
policy: {kind: optuna, sampler: random, pruner: none, seed: 0}
EOF

nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader,nounits -l 1 \
    >"$WORK/utilization.csv" 2>/dev/null &
SAMPLER=$!
trap 'kill "$SAMPLER" 2>/dev/null || true' EXIT

if command -v autoresearch >/dev/null 2>&1; then
    AUTORESEARCH=(autoresearch)
else
    AUTORESEARCH=("$PYTHON" -c 'from autoresearch.cli import main; main()')
fi
status=0
"${AUTORESEARCH[@]}" run "$WORK/campaign.yaml" || status=$?
kill "$SAMPLER" 2>/dev/null || true
"${AUTORESEARCH[@]}" status "$NAME" --json >"$WORK/status.json"

report=0
"$PYTHON" - "$WORK/status.json" "$WORK/utilization.csv" <<'EOF' || report=$?
"""Per-trial tokens/s and val_bpb (from each trial's MLflow run), GPU utilisation, best val_bpb."""
import json
import os
import sys
from collections import defaultdict

from mlflow.tracking import MlflowClient

status = json.load(open(sys.argv[1]))
client = MlflowClient(tracking_uri=f"sqlite:///{os.environ['AUTORESEARCH_HOME']}/mlflow.db")
print(f"\n{'trial':>5}  {'state':<10} {'tokens_per_s':>13}  {'val_bpb':>8}  params")
for trial in status["trials"]:
    speed = "-"
    if trial.get("mlflow_run_id"):
        history = client.get_metric_history(trial["mlflow_run_id"], "tokens_per_s")
        if history:
            speed = f"{max(history, key=lambda m: m.step).value:,.0f}"
    value = "-" if trial.get("value") is None else f"{trial['value']:.4f}"
    print(f"{trial['number']:>5}  {trial['state']:<10} {speed:>13}  {value:>8}  {trial['params']}")

samples = defaultdict(list)
for line in open(sys.argv[2]):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) == 3 and parts[1].isdigit():
        samples[parts[0]].append((int(parts[1]), float(parts[2])))
print("\nGPU utilisation while the campaign ran (nvidia-smi, 1 s samples):")
for gpu, points in sorted(samples.items()):
    util = [u for u, _ in points]
    busy = [u for u in util if u > 0]
    print(f"  gpu {gpu}: mean {sum(util) / len(util):.0f}%, mean while busy "
          f"{(sum(busy) / len(busy)) if busy else 0:.0f}%, max {max(util)}%, "
          f"max memory {max(m for _, m in points):.0f} MiB, {len(util)} samples")
values = [t["value"] for t in status["trials"] if t.get("value") is not None]
print(f"\nbest val_bpb: {min(values):.4f}" if values else "\nbest val_bpb: none (no trial completed)")
sys.exit(0 if values else 1)
EOF
exit $((status != 0 ? status : report != 0 ? report : smoke))
