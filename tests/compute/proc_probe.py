"""A job that tries to read a control-plane process's secrets through /proc, as a hostile job would.

`python proc_probe.py PIDFILE HEAD TAIL`: the pid is the first word of PIDFILE (a daemon.lock or
runner.lock); the secret is HEAD + TAIL, given in two halves so the job's own spec (which the
daemon holds) never contains it. Prints `environ: ...` and `memory: ...` lines (LEAK, clean, or
refused ERRNO), then `objective: 1` so a campaign can run it as a trial.
"""

import os
import sys


def environ(pid: int, secret: bytes) -> str:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            data = f.read()
    except OSError as err:
        return f"refused {err.errno}"
    return "LEAK" if secret in data else f"clean ({len(data)} bytes read)"


def memory(pid: int, secret: bytes) -> str:
    try:
        with open(f"/proc/{pid}/maps") as f:
            maps = f.read().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb")
    except OSError as err:
        return f"refused {err.errno}"
    with mem:
        for line in maps:
            span, perms = line.split()[:2]
            low, high = (int(x, 16) for x in span.split("-"))
            if not perms.startswith("r") or high - low > 1 << 28:
                continue
            try:
                mem.seek(low)
                if secret in mem.read(high - low):
                    return "LEAK"
            except (OSError, OverflowError, ValueError):
                continue
    return "clean"


def main() -> None:
    with open(sys.argv[1]) as f:
        pid = int(f.read().split()[0])
    secret = (sys.argv[2] + sys.argv[3]).encode()
    print(f"probed pid: {pid} (mine {os.getpid()})")
    print("environ:", environ(pid, secret))
    print("memory:", memory(pid, secret))
    print("objective: 1", flush=True)


if __name__ == "__main__":
    main()
