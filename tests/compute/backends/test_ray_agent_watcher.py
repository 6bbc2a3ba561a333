"""The Ray node agent's one watcher (compute/backends/_ray_agent.py): when the agent dies, the
process groups of its attempts still running are SIGKILLed, those that ended are left alone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

AGENT = """
import os, signal, subprocess, sys, time
from compute.backends._ray_agent import Watcher
watcher = Watcher()
procs = [subprocess.Popen(["sleep", "300"], start_new_session=True) for _ in range(3)]
watcher.add(procs[0].pid)
if sys.argv[1] == "replaced":  # the watcher is killed: the next write finds it gone and forks a new one
    pipe = f"pipe:[{os.fstat(watcher._fd).st_ino}]"
    (pid,) = [int(p) for p in os.listdir("/proc") if p.isdigit() and os.path.exists(f"/proc/{p}/fd/3")
              and os.readlink(f"/proc/{p}/fd/3") == pipe]
    os.kill(pid, signal.SIGKILL)
    while os.path.exists(f"/proc/{pid}/fd/3"):
        time.sleep(0.01)
for proc in procs[1:]:
    watcher.add(proc.pid)
watcher.remove(procs[2].pid)  # this attempt ended (as far as the watcher knows)
print(" ".join(str(p.pid) for p in procs), flush=True)
time.sleep(300)
"""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:][:1] not in ("Z", "X")


@pytest.mark.parametrize("watcher", ["first", "replaced"])
def test_a_dead_agent_s_watcher_kills_the_groups_still_running_and_spares_the_ended(watcher):
    agent = subprocess.Popen([sys.executable, "-c", AGENT, watcher], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])})
    assert agent.stdout is not None
    running_1, running_2, ended = (int(p) for p in agent.stdout.readline().split())
    try:
        assert all(_alive(pid) for pid in (running_1, running_2, ended))
        agent.kill()  # SIGKILL: nothing of the agent's own code runs; its end of the pipe closes
        agent.wait()
        deadline = time.monotonic() + 30
        while (_alive(running_1) or _alive(running_2)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(running_1) and not _alive(running_2)
        assert _alive(ended)
    finally:
        for pid in (running_1, running_2, ended):
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
