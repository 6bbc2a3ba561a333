"""A resumable test job: sums 0..N-1 one step at a time; on SIGTERM saves its state and exits.

Usage: counter.py STEPS STEP_SECONDS. Prints `result: <sum>` at the end.
"""

import json
import os
import signal
import sys
import time

steps, step_s = int(sys.argv[1]), float(sys.argv[2])
path = os.path.join(os.environ["AR_CHECKPOINT_DIR"], "state.json")
state = {"step": 0, "total": 0}
if os.path.exists(path):
    with open(path) as fh:
        state = json.load(fh)
    print(f"resumed from step {state['step']}", flush=True)
stopping = False


def on_term(*_):
    global stopping
    stopping = True


signal.signal(signal.SIGTERM, on_term)
while state["step"] < steps:
    if stopping:
        with open(path + ".tmp", "w") as fh:
            json.dump(state, fh)
        os.replace(path + ".tmp", path)
        print(f"checkpointed at step {state['step']}", flush=True)
        sys.exit(0)
    state["total"] += state["step"]
    state["step"] += 1
    print(f"step {state['step']}", flush=True)
    time.sleep(step_s)
print(f"result: {state['total']}", flush=True)
