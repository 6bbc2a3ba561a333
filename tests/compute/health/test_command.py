"""The command probe with real subprocesses."""

from __future__ import annotations

import os
import sys
import time

import pytest

from compute.health import CommandProbe, NodeTarget
from compute.records import HealthStatus

NODE = NodeTarget(name="v2", gpus=(4, 5), virtual=True)


def py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_exit_0_is_healthy_and_sees_the_node():
    code = "import os; assert os.environ['AR_NODE'] == 'v2' and os.environ['CUDA_VISIBLE_DEVICES'] == '4,5'"
    report = CommandProbe(py(code + " and os.environ['AR_NODE_VIRTUAL'] == '1'"), timeout_s=60).probe(NODE)
    assert report.status is HealthStatus.ok
    assert report.probe == "command" and report.node == "v2"
    assert report.checks[0].value == 0


def test_nonzero_exit_is_critical_with_the_output_tail():
    code = ("import sys; print('\\n'.join(f'line {i}' for i in range(500))); "
            "print('DIMM B3 failed', file=sys.stderr); sys.exit(3)")
    report = CommandProbe(py(code), timeout_s=60, name="site-check").probe(NODE)
    assert report.status is HealthStatus.critical and report.probe == "site-check"
    (check,) = report.checks
    assert check.value == 3 and check.threshold == 0
    assert "exited 3" in check.message and check.message.endswith("DIMM B3 failed")
    assert "line 0\n" not in check.message, "only the tail is kept"


def test_a_hung_check_is_killed_with_its_children_and_is_critical(tmp_path):
    pidfile = tmp_path / "child.pid"
    code = (
        "import subprocess, sys, time; "
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
        f"open({str(pidfile)!r}, 'w').write(str(p.pid)); print('checking', flush=True); time.sleep(600)"
    )
    report = CommandProbe(py(code), timeout_s=3).probe(NODE)
    assert report.status is HealthStatus.critical
    (check,) = report.checks
    assert check.name == "timeout" and "ran past 3 s" in check.message and "checking" in check.message
    child = int(pidfile.read_text())
    for _ in range(100):  # the grandchild got SIGKILL with the group; wait until it is reaped or gone
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        if open(f"/proc/{child}/stat").read().split()[2] == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail("the health check's child survived the timeout")


def test_a_missing_command_is_degraded_not_critical():
    report = CommandProbe(["/nonexistent/gpu-check.sh"]).probe(NODE)
    assert report.status is HealthStatus.degraded
    assert "could not start" in report.checks[0].message


def test_empty_argv_is_refused():
    with pytest.raises(ValueError, match="argv is empty"):
        CommandProbe([])
