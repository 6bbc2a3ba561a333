from __future__ import annotations

import os
import stat

import pytest

from tests.compute.health.helpers import SMI

FAKE_SMI = """#!/bin/sh
# A stand-in for nvidia-smi (no GPU here): replays a recorded output, logs its argv.
echo "$*" >> "$FAKE_SMI_CALLS"
case "$*" in
  *clocks_event_reasons*)
    if [ -n "$FAKE_SMI_REJECT_EVENT" ]; then cat "$FAKE_SMI_REJECT_EVENT"; exit 2; fi ;;
esac
if [ -n "$FAKE_SMI_SLEEP" ]; then sleep "$FAKE_SMI_SLEEP"; fi
cat "$FAKE_SMI_OUT"
exit "${FAKE_SMI_EXIT:-0}"
"""


@pytest.fixture(autouse=True)
def _home(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTORESEARCH_HOME", str(tmp_path / "home"))


@pytest.fixture
def fake_smi(tmp_path, monkeypatch):
    """Path of an executable nvidia-smi stand-in; `use(name, **env)` picks the recorded output."""
    exe = tmp_path / "bin" / "nvidia-smi"
    exe.parent.mkdir()
    exe.write_text(FAKE_SMI)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    calls = tmp_path / "smi_calls.txt"
    monkeypatch.setenv("FAKE_SMI_CALLS", str(calls))

    class Fake:
        path = str(exe)

        def use(self, name: str, **env: str) -> None:
            monkeypatch.setenv("FAKE_SMI_OUT", str(SMI / name))
            for key, value in env.items():
                monkeypatch.setenv(key, value)

        def calls(self) -> list[str]:
            return calls.read_text().splitlines() if calls.exists() else []

    return Fake()



@pytest.fixture
def nvidia_driver(fake_smi, monkeypatch):
    """An `nvidia-smi` on PATH: the cuda and nccl probes run their check only on a host with the driver."""
    monkeypatch.setenv("PATH", f"{os.path.dirname(fake_smi.path)}{os.pathsep}{os.environ['PATH']}")
    return fake_smi
