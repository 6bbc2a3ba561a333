"""Health probes on Ray nodes: any `HealthProbe`, run as a Ray task pinned to the node it probes.

The daemon's `HealthMonitor` calls `probe` from its own threads, so waiting on the task
here never stalls the daemon's loop. The probe object travels to the node by pickle and
runs there exactly as it would locally (nvidia-smi, the cuda matmul, the user command
see that node's GPUs). A task that cannot run (node gone) or overruns gives a critical
report: a node that cannot answer a health check is not healthy.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import ray
from ray.exceptions import GetTimeoutError, RayError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from compute.health.report import Check, HealthProbe, HealthReport, NodeTarget
from compute.records import HealthStatus

_MARGIN_S = 30.0
"""Beyond the probe's own timeout: time for Ray to start a worker on the node."""


@ray.remote(num_cpus=0, max_retries=0)
def _probe_on_node(probe: HealthProbe, target: NodeTarget) -> HealthReport:
    return probe.probe(target)


class RayProbe:
    """Runs `inner` on the Ray node behind each target (`node_id(name)` gives its id)."""

    def __init__(self, inner: HealthProbe, node_id: Callable[[str], str | None]) -> None:
        self.inner = inner
        self.name = inner.name
        self._node_id = node_id

    def probe(self, node: NodeTarget) -> HealthReport:
        started = time.time()
        node_id = self._node_id(node.name)
        if node_id is None:
            return self._failed(node, started, "node is no longer in the Ray cluster")
        timeout = float(getattr(self.inner, "timeout_s", 60.0)) + _MARGIN_S
        ref = _probe_on_node.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False)).remote(
            self.inner, node)
        try:
            return ray.get(ref, timeout=timeout)
        except GetTimeoutError:
            ray.cancel(ref, force=True)
            return self._failed(node, started, f"the {self.name} probe did not answer within {timeout:g}s on Ray")
        except RayTaskError as err:
            raise RuntimeError(f"{self.name} probe raised on the node: {err.cause!r}") from None
        except RayError as err:
            return self._failed(node, started, f"the {self.name} probe could not run on the node: {err}")

    def _failed(self, node: NodeTarget, started: float, message: str) -> HealthReport:
        check = Check(name="ray", status=HealthStatus.critical, message=message)
        return HealthReport.from_checks(node.name, self.name, [check], started, time.time() - started)


def on_ray_nodes(probes: Sequence[HealthProbe], node_id: Callable[[str], str | None]) -> list[HealthProbe]:
    """The same probes, each run on the probed node through Ray."""
    return [RayProbe(p, node_id) for p in probes]
