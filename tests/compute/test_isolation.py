"""A job cannot read the control plane's secrets: the daemon seals itself (compute/isolation.py).

The hostile job is tests/compute/proc_probe.py, reading /proc/PID/environ and /proc/PID/mem of the
pid that `daemon.lock` names, as the job sees it. Run as this machine's user (root in CI: the
case where only the scrub and the dropped CAP_SYS_PTRACE protect), and as an unprivileged uid.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compute import JobSpec, JobState
from compute.log_secrets import mask

PROBE = Path(__file__).with_name("proc_probe.py")
SECRET_HEAD, SECRET_TAIL = "hf_probe", "-never-in-a-job-7731"
SECRET = SECRET_HEAD + SECRET_TAIL


def _probe_log(client, cwd: Path, pidfile: Path) -> str:
    job = client.submit(JobSpec(name="probe", argv=[sys.executable, str(PROBE), str(pidfile), SECRET_HEAD,
                                                    SECRET_TAIL], cwd=str(cwd)))  # fmt: skip
    [done] = client.wait([job.id], timeout=120)
    log = client.log_path(job.id).read_text()
    assert done.state == JobState.succeeded, log
    return log


def test_a_job_reads_neither_the_daemons_environment_nor_its_memory(start_compute, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", SECRET)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    client = start_compute()
    log = _probe_log(client, tmp_path, client.home / "compute" / "daemon.lock")
    assert "LEAK" not in log, log
    assert "memory: refused" in log, log  # /proc/PID/mem: EACCES (non-dumpable, no CAP_SYS_PTRACE in the job)
    environ = next(line for line in log.splitlines() if line.startswith("environ:"))
    assert environ.startswith(("environ: refused", "environ: clean")), log
    # The daemon still holds the credential for jobs that ask for it by name.
    named = client.submit(JobSpec(name="env", argv=["env"], cwd=str(tmp_path), secret_env=["HF_TOKEN"]))
    client.wait([named.id], timeout=60)
    assert f"HF_TOKEN={mask(len(SECRET)).decode()}" in client.log_path(named.id).read_text()  # got it; masked in its log


SEALED = """
import os, subprocess, sys
from compute.isolation import seal_process
seal = seal_process()
print("seal:", seal)
try:
    shown = open("/proc/self/environ", "rb").read()
    print("environ shows secret:", b"{secret}" in shown, "path:", b"PATH=" in shown)
except OSError as err:  # an unprivileged non-dumpable process cannot open its own environ
    print("environ refused", err.errno)
print("os.environ keeps it:", os.environ["HF_TOKEN"] == "{secret}")
child = subprocess.run(["sh", "-c", 'echo "$HF_TOKEN"'], capture_output=True, text=True).stdout.strip()
print("child inherits it:", child == "{secret}")
caps = subprocess.run(["grep", "CapBnd", "/proc/self/status"], capture_output=True, text=True).stdout.split()[1]
print("child may ptrace:", bool(int(caps, 16) >> 19 & 1))
print("same seal again:", seal_process() is seal)
me = os.getpid()
for part in ("environ", "mem"):
    read = subprocess.run(["sh", "-c", f"head -c 1 /proc/{me}/{part}"], capture_output=True).returncode == 0
    print(f"another process of this uid opens {part}:", read)
"""


def _run_sealed(preexec: list[str]) -> str:
    env = {**os.environ, "HF_TOKEN": SECRET, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([*preexec, sys.executable, "-c", SEALED.replace("{secret}", SECRET)], env=env,
                          capture_output=True, text=True, timeout=60, cwd="/")  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_sealed_process_keeps_its_environment_but_no_longer_shows_it():
    out = _run_sealed([])
    assert "non_dumpable=True" in out and "environ_scrubbed=True" in out, out
    assert "environ shows secret: False path: True" in out, out  # the allowlisted variables stay visible
    assert "os.environ keeps it: True" in out and "child inherits it: True" in out, out
    assert "same seal again: True" in out, out
    assert "another process of this uid opens mem: False" in out, out
    if os.geteuid() == 0:
        assert "ptrace_dropped=True" in out and "child may ptrace: False" in out, out


@pytest.mark.skipif(os.geteuid() != 0 or not Path("/usr/bin/setpriv").exists(), reason="needs root and setpriv")
def test_an_unprivileged_sealed_process_is_closed_to_its_own_uid(tmp_path):
    """As uid 65534: the seal still scrubs; a sibling of the same uid cannot open environ or mem."""
    out = _run_sealed(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"])
    assert "non_dumpable=True" in out and "environ_scrubbed=True" in out, out
    assert "os.environ keeps it: True" in out and "child inherits it: True" in out, out
    assert "another process of this uid opens environ: False" in out, out
    assert "another process of this uid opens mem: False" in out, out
