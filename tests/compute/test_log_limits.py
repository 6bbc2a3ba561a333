"""Logs that cannot exhaust memory or disk: tails read from the end, `jobs logs` streams in chunks,
the daemon caps each attempt's log (head and tail kept, a marker where it was cut), and a log
written to a terminal cannot drive it."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import tracemalloc
from pathlib import Path

from compute import Client, JobSpec, JobState
from compute.attempt_logs import CUT_MARKER, TAIL_SCAN_BYTES, read_chunks, read_tail, text_of
from tests.compute.helpers import wait_state
from tracking import read_log_points

ROOT = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-c", "from autoresearch.cli import main; main()"]
_PEAK_RSS = """
import resource, subprocess, sys
with open(sys.argv[1], "wb") as out:
    code = subprocess.run(sys.argv[2:], stdout=out).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
"""
"""Runs a command with its stdout in a file; prints its exit code and peak resident memory (bytes)."""


def _cli_peak(home: Path, out: Path, *args: str) -> int:
    env = {**os.environ, "AUTORESEARCH_HOME": str(home), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", _PEAK_RSS, str(out), *CLI, *args],
                          env=env, capture_output=True, text=True, timeout=300, check=True)
    code, peak = map(int, done.stdout.split())
    assert code == 0, done.stderr
    return peak


def _finished_log(client: Client, argv: list[str]) -> tuple[str, Path]:
    job_id = client.submit(JobSpec(argv=argv)).id
    wait_state(client, job_id, JobState.succeeded)
    return job_id, Path(client.log_path(job_id))


def test_jobs_logs_reads_a_200_mb_log_in_bounded_memory(compute_client: Client, tmp_path: Path) -> None:
    job_id, log = _finished_log(compute_client, ["echo", "first"])
    block = b"".join(b"filler line %07d of a long training log\n" % i for i in range(25_000))
    with log.open("ab") as f:
        for _ in range(200 * (1 << 20) // len(block)):
            f.write(block)
        f.write(b"last but one\nlast\n")
    size = log.stat().st_size
    home, out = compute_client.home, tmp_path / "out"

    tail_peak = _cli_peak(home, out, "jobs", "logs", job_id, "--tail", "2")
    assert out.read_bytes() == b"last but one\nlast\n"
    stream_peak = _cli_peak(home, out, "jobs", "logs", job_id)
    assert out.stat().st_size == size and out.read_bytes()[-18:] == b"last but one\nlast\n"
    json_peak = _cli_peak(home, out, "jobs", "logs", job_id, "--json")
    with out.open("rb") as f:
        f.seek(-200, os.SEEK_END)
        assert f.read().endswith(b'last but one\\nlast\\n",\n  "waiting_reason": null\n}\n')
    assert max(tail_peak, stream_peak, json_peak) < 64 << 20  # the log is 200 MB; loading it would hold it twice


def test_a_tail_reads_only_the_end_of_a_1_gb_log(tmp_path: Path) -> None:
    log, one_line = tmp_path / "attempt-1.log", tmp_path / "attempt-2.log"
    for path, end in ((log, b"a\nb\nc\n"), (one_line, b"the end of a 1 GB line")):
        with path.open("wb") as f:
            f.write(b"x" * 100)
            f.seek(1 << 30)  # sparse: made at once
            f.write(end)
    tracemalloc.start()
    try:
        tail = read_tail(log, lines=2)
        small_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        long_tail = read_tail(one_line, lines=2)  # no newline in sight: read back at most TAIL_SCAN_BYTES
        big_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (tail.text, tail.start, tail.size) == ("b\nc\n", (1 << 30) + 2, (1 << 30) + 6)
    assert small_peak < 1 << 20
    assert long_tail.text.endswith("the end of a 1 GB line") and len(long_tail.data) == TAIL_SCAN_BYTES
    assert big_peak < 2.5 * TAIL_SCAN_BYTES


def test_the_daemon_caps_a_log_keeping_its_head_and_tail(start_compute, tmp_path: Path) -> None:
    client = start_compute(log_max_bytes=1 << 20)
    script = ("import sys, time\nprint('the head line', flush=True)\n"
              "for burst in range(10):\n"
              "    sys.stdout.write(''.join(f'burst {burst} line {i:06d} loss: 1.5\\n' for i in range(25000)))\n"
              "    sys.stdout.flush(); time.sleep(0.3)\n"
              "print('objective: 0.31')\n")
    job_id, log = _finished_log(client, [sys.executable, "-c", script])
    assert log.stat().st_size > 7 << 20  # what it wrote
    assert log.stat().st_blocks * 512 <= 1 << 20  # what the log holds on disk
    text = text_of(b"".join(chunk for _, chunk in read_chunks(log)))
    lines = text.splitlines()
    assert lines[0] == "the head line" and lines[-1] == "objective: 0.31"
    assert sum(line.startswith(CUT_MARKER) for line in lines) == 1
    assert [p.value for p in read_log_points({1: log}, final=True) if p.key == "objective"] == [0.31]
    shown = subprocess.run([*CLI, "jobs", "logs", job_id], capture_output=True,
                           env={**os.environ, "AUTORESEARCH_HOME": str(client.home), "PYTHONPATH": str(ROOT)},
                           timeout=120, check=True).stdout
    assert shown.decode() == text and b"\0" not in shown


def test_jobs_logs_on_a_terminal_shows_escape_sequences_inert(compute_client: Client) -> None:
    job_id, _ = _finished_log(compute_client, ["printf", "title\\033]0;pwned\\007 red \\033[31mX\\033[0m\\n"])
    main, replica = pty.openpty()
    env = {**os.environ, "AUTORESEARCH_HOME": str(compute_client.home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([*CLI, "jobs", "logs", job_id], stdout=replica,
                            stderr=subprocess.PIPE, env=env)
    os.close(replica)
    shown = b""
    while True:
        try:
            piece = os.read(main, 65536)
        except OSError:  # EIO: the command closed the terminal
            break
        if not piece:
            break
        shown += piece
    os.close(main)
    assert proc.wait(timeout=60) == 0
    assert b"\x1b" not in shown and b"\x07" not in shown
    assert shown.decode().replace("\r\n", "\n") == "title\\x1b]0;pwned\\x07 red \\x1b[31mX\\x1b[0m\n"
    plain = json.loads(subprocess.run([*CLI, "jobs", "logs", job_id, "--json"],
                                      env=env, capture_output=True, timeout=60, check=True).stdout)
    assert plain["text"] == "title\x1b]0;pwned\x07 red \x1b[31mX\x1b[0m\n"  # a pipe or --json gets the bytes as they are
