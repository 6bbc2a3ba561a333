"""Running example jobs as real subprocesses and reading their `key: value` output."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def job_env(**extra: str | os.PathLike) -> dict[str, str]:
    """The test process's environment without MLflow or checkpoint variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "AR_"))}
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_job(script: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120,
            python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    return subprocess.run([python, script.name, *args], cwd=script.parent, env=env or job_env(),
                          capture_output=True, text=True, timeout=timeout)


def start_job(script: Path, *args: str, env: dict[str, str] | None = None,
              python: str = sys.executable) -> subprocess.Popen[str]:
    return subprocess.Popen([python, script.name, *args], cwd=script.parent, env=env or job_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def terminate_after(proc: subprocess.Popen[str], is_ready, timeout: float = 120) -> tuple[int, str, str]:
    """Read stdout until `is_ready(lines)` holds, send SIGTERM, wait; (exit code, stdout, stderr)."""
    lines: list[str] = []
    for line in proc.stdout:  # blocking reads; the job prints line-buffered
        lines.append(line)
        if is_ready(lines):
            proc.send_signal(signal.SIGTERM)
            break
    else:
        proc.wait(timeout=timeout)
        raise AssertionError(f"job ended (exit {proc.returncode}) before it was ready: {''.join(lines)[-2000:]}")
    proc.wait(timeout=timeout)  # then read what is left (communicate() would skip buffered lines)
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.stdout.close()
    proc.stderr.close()
    return proc.returncode, "".join(lines) + out, err


def metrics(stdout: str) -> list[tuple[int | None, str, float]]:
    """(step, key, value) of every `key: value` line; `step:` / `epoch:` lines set the step."""
    points, step = [], None
    for line in stdout.splitlines():
        key, sep, value = line.partition(": ")
        if not sep:
            continue
        if key in ("step", "epoch"):
            step = int(value)
        else:
            points.append((step, key, float(value)))
    return points


def series(stdout: str, key: str) -> dict[int, float]:
    """step -> value of one metric."""
    return {step: value for step, k, value in metrics(stdout) if k == key}


def last_line(stdout: str) -> tuple[str, float]:
    key, _, value = stdout.strip().splitlines()[-1].partition(": ")
    return key, float(value)
