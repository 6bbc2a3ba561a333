"""The command probe: any user command, healthy on exit 0 (like Slurm's HealthCheckProgram)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence

from compute.health._proc import run_command, tail
from compute.health.report import Check, HealthReport, NodeTarget
from compute.jobenv import AR_NODE, AR_NODE_VIRTUAL, CUDA_VISIBLE_DEVICES
from compute.records import HealthStatus


class CommandProbe:
    """Runs `argv` with the node in its environment; exit 0 is ok, anything else critical.

    The command sees AR_NODE (node name), AR_NODE_VIRTUAL (0/1) and CUDA_VISIBLE_DEVICES
    (the node's GPUs). Past `timeout_s` its whole process group is killed and the node is
    critical: a health check that hangs is a sick node. The last lines of its output go in
    the check message.
    """

    def __init__(self, argv: Sequence[str], timeout_s: float = 60.0, name: str = "command", cwd: str | None = None):
        if not argv or not argv[0]:
            raise ValueError("command probe: argv is empty; give the health check command, e.g. ['/etc/gpu-check.sh']")
        self.argv = list(argv)
        self.timeout_s = timeout_s
        self.name = name
        self.cwd = cwd

    def probe(self, node: NodeTarget) -> HealthReport:
        started = time.time()
        env = {
            **os.environ,
            AR_NODE.name: node.name,
            AR_NODE_VIRTUAL.name: "1" if node.virtual else "0",
            CUDA_VISIBLE_DEVICES.name: ",".join(map(str, node.gpus)),
        }
        proc = run_command(self.argv, self.timeout_s, env=env, cwd=self.cwd)
        shown = " ".join(self.argv)
        if proc.timed_out:
            check = Check(
                name="timeout", status=HealthStatus.critical, value=None, threshold=self.timeout_s,
                message=f"`{shown}` ran past {self.timeout_s:g} s and was killed; output: {tail(proc.output, 500)}",
            )
        elif proc.exit_code is None:
            check = Check(
                name="exit_code", status=HealthStatus.degraded, value=None, threshold=0,
                message=f"`{shown}` could not start ({proc.start_error}): fix the health check command "
                "(a broken check marks nodes degraded, it does not quarantine them)",
            )
        elif proc.exit_code == 0:
            check = Check(name="exit_code", status=HealthStatus.ok, value=0, threshold=0, message="passed")
        else:
            check = Check(
                name="exit_code", status=HealthStatus.critical, value=proc.exit_code, threshold=0,
                message=f"`{shown}` exited {proc.exit_code}: {tail(proc.output, 500) or '(no output)'}",
            )
        return HealthReport.from_checks(node.name, self.name, [check], started, time.time() - started)
