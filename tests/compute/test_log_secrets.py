"""A job's `secret_env` values are masked in its log by the daemon, for every reader: `jobs logs`
from a shell without the variable, the dashboard's reads, `read_logs`, the file itself."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compute import ComputePaths, JobSpec, JobState
from compute.attempt_logs import read_chunks, read_tail, text_of
from compute.log_secrets import mask
from tests.compute.helpers import wait_state, wait_until

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from autoresearch.cli import main; main()"]
TOKEN = "hf_not-a-real-token-9f3e1a"


def test_a_printed_secret_is_masked_for_readers_without_it(start_compute, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AR_TEST_SECRET", TOKEN)  # in the daemon's environment only
    client = start_compute()
    half = len(TOKEN) // 2
    script = ("import os, sys, time\nv = os.environ['AR_TEST_SECRET']\nprint('token', v, 'and again', v, flush=True)\n"
              f"sys.stdout.write('split ' + v[:{half}]); sys.stdout.flush(); time.sleep(2)\n"
              f"print(v[{half}:] + ' done')\n")
    job_id = client.submit(JobSpec(argv=[sys.executable, "-c", script], secret_env=["AR_TEST_SECRET"])).id
    log = Path(client.log_path(wait_until(lambda: client.get(job_id).attempts and job_id)))
    shown_while_split = wait_until(lambda: (t := read_tail(log).text) and "token" in t and t, what="the first line")
    assert TOKEN not in shown_while_split and TOKEN[:half] not in shown_while_split  # the half may be a secret's start
    wait_state(client, job_id, JobState.succeeded)

    hidden = mask(len(TOKEN)).decode()
    expected = f"token {hidden} and again {hidden}\nsplit {hidden} done\n"
    env = {k: v for k, v in os.environ.items() if k != "AR_TEST_SECRET"}
    env.update(AUTORESEARCH_HOME=str(client.home), PYTHONPATH=str(ROOT))
    shown = subprocess.run([*CLI, "jobs", "logs", job_id], env=env, capture_output=True, text=True, timeout=120,
                           check=True).stdout
    assert shown == expected
    assert read_tail(log, lines=1).text == f"split {hidden} done\n"  # the dashboard's and the classifier's reads
    assert text_of(b"".join(chunk for _, chunk in read_chunks(log))) == expected
    assert log.read_text() == expected  # the file itself: masked in place, same length
    run_dir = ComputePaths.of(client.home).run_dir
    assert run_dir.is_dir() and not list(run_dir.glob("*.secrets"))  # the values went with the attempt
