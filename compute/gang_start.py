"""What the daemon launches for a gang attempt, and how it follows the attempt's preflight.

`gang_requests` builds one `LaunchRequest` per member: its variables (compute/gang_env.py), its
argv (under torchrun for `launcher: torchrun`) and, when the gang preflight runs
(compute/health/gang_preflight.py), that argv wrapped so the member first joins a cross-node
all-reduce on a port of its own beside MASTER_PORT. `settle_preflight` turns the members'
result files into events (passed, skipped, failed on rank R) and, on a failure, the line in the
blamed member's log that classifies the attempt as infra (rule `gang_preflight`).

The attempt's handle says where its preflight stands: `preflight` is `pending`, `passed` or
`failed` (absent: it did not run).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from compute.attempt_command import attempt_argv, attempt_env
from compute.attempt_logs import append_log
from compute.backends.base import HostsGangs, LaunchError, LaunchRequest
from compute.gang_env import gang_env, job_python, member_argv
from compute.health.gang_preflight import Plan, Verdict, verdict, wrap
from compute.lifecycle import LiveAttempt, Started, job_event, record_handle
from compute.store import Store

_PORT_TRIES = 5


def preflight_port(backend: HostsGangs, node: str, master_port: int) -> int:
    """A free port on rank 0's node for the preflight's rendezvous, other than MASTER_PORT."""
    for _ in range(_PORT_TRIES):
        port = backend.master_address(node)[1]
        if port != master_port:
            return port
    raise LaunchError(f"could not find a second free port on {node} for the gang preflight "
                      f"(got {master_port} {_PORT_TRIES} times); set gang_preflight: off to start without it",
                      infra=True)


def gang_requests(started: Started, cwd: str, master: tuple[str, int], preflight: Plan, port: int,
                  timeout_s: float, faulty: Callable[[str], bool]) -> list[LaunchRequest]:
    """One request per member (rank order). `faulty(node)`: a fault drill fails that member's preflight."""
    spec = started.spec
    requests = []
    for m in started.members:
        env, missing = attempt_env(spec, started.job_id, started.number, m.gpus, started.checkpoint_dir, m.node)
        if missing is not None:
            raise LaunchError(f"the job's secret_env names {missing}, which the compute daemon's environment "
                              f"lacks; set {missing} in the shell that starts the daemon")
        env.update(gang_env(spec.resources.nodes, m.rank, spec.resources.gpus, master))
        path = env.get("PATH") or os.environ.get("PATH")
        plain = attempt_argv(spec, m.gpus, cwd, started.checkpoint_dir, env)
        argv = member_argv(spec, plain, m.rank, master, path)
        if preflight.backend is not None:
            argv = wrap(argv, job_python(plain, path) or sys.executable, rank=m.rank, world=len(started.members),
                        master=(master[0], port), backend=preflight.backend, timeout_s=timeout_s,
                        log_path=m.log_path, fault=faulty(m.node))
        requests.append(LaunchRequest(
            key=f"{started.job_id}.{started.number}.r{m.rank}", argv=argv, env=env, cwd=cwd, node=m.node,
            gpus=m.gpus, log_path=Path(m.log_path), cpus=spec.resources.cpus, memory_gb=spec.resources.memory_gb,
            labels=dict(spec.labels),
        ))
    return requests


def settle_preflight(store: Store, attempt: LiveAttempt) -> tuple[LiveAttempt, Verdict | None]:
    """Read a pending preflight's results; record what they say. Returns the attempt with its
    handle as recorded now, and the verdict (None while some member has not answered)."""
    handle: dict[str, Any] = dict(attempt.handle or {})
    found = verdict([m.log_path for m in attempt.members], [m.node for m in attempt.members])
    if found is None:
        return attempt, None
    node = attempt.members[found.blame].node if found.blame is not None else attempt.node
    if found.passed:
        handle["preflight"] = "passed"
        kind = "gang_preflight_skipped" if found.skipped else "gang_preflight_passed"
    else:
        handle.update(preflight="failed", blame=found.blame)
        kind = "gang_preflight_failed"
        logs = [attempt.members[found.blame or 0].log_path, attempt.log_path]
        for path in dict.fromkeys(logs):
            append_log(path, [f"[autoresearch] {found.reason}"])
    record_handle(store, attempt.job_id, attempt.number, handle)
    job_event(store, kind, found.reason, attempt.job_id, attempt.number, node)
    return replace(attempt, handle=handle), found
