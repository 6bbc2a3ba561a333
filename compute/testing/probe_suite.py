"""What every `HealthProbe` must do (compute/health/report.py), written once and run on each probe.

A test module subclasses `ProbeSuite` and provides a fixture `probe_case` -> a `ProbeCase`,
parametrized over the probes: the probe under test set up for each
condition the rules speak of. The suite checks, for every probe:

- a healthy node gives a well-formed ok report: named for the node and the probe, with
  checks, its status the worst of them, a start time and a duration;
- a sick node gives a critical report (it never raises), whose failing checks say why;
- a probe whose work hangs gives a critical report once its own timeout ends it;
- where the probe does not apply (no GPUs ...), status ok with one `skipped` check;
- probing several nodes from several threads at once gives each its own report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from compute.health.report import HealthProbe, HealthReport, NodeTarget, worst
from compute.records import HealthStatus

__all__ = ["ProbeCase", "ProbeSuite"]

Setup = Callable[[], tuple[HealthProbe, NodeTarget]]
"""() -> (the probe, the node to probe) in one condition."""


@dataclass(frozen=True)
class ProbeCase:
    """One probe set up for each condition the suite checks (None: the condition cannot arise)."""

    healthy: Setup
    """A probe and a node it finds healthy."""
    sick: Setup
    """A probe and a node it finds sick."""
    hung: Setup | None = None
    """A probe whose work hangs (with a short timeout), and a node."""
    not_applicable: Setup | None = None
    """A probe and a node it does not apply to (it must skip)."""


def _well_formed(report: HealthReport, probe: HealthProbe, node: NodeTarget, before: float) -> None:
    assert report.node == node.name, f"{probe.name}: the report names node {report.node!r}, not {node.name!r}"
    assert report.probe == probe.name, f"the report names probe {report.probe!r}, not {probe.name!r}"
    assert report.checks, f"{probe.name}: a report has at least one check"
    assert report.status is worst(c.status for c in report.checks), f"{probe.name}: status is the worst check's"
    assert report.ts >= before - 1.0 and report.duration_s >= 0.0


class ProbeSuite:
    """The rules of `HealthProbe`, one test each, on the `probe_case` fixture."""

    def test_a_healthy_node_gives_a_well_formed_ok_report(self, probe_case: ProbeCase) -> None:
        probe, node = probe_case.healthy()
        assert isinstance(probe, HealthProbe) and probe.name
        before = time.time()
        report = probe.probe(node)
        _well_formed(report, probe, node, before)
        assert report.status is HealthStatus.ok, report.reason
        if all(c.skipped for c in report.checks):  # it could not look here (torch without CUDA ...): never "healthy"
            assert report.reason.startswith(f"{probe.name}: skipped ("), report.reason
        else:
            assert report.reason == f"{probe.name}: healthy"

    def test_a_sick_node_is_critical_not_an_exception(self, probe_case: ProbeCase) -> None:
        probe, node = probe_case.sick()
        before = time.time()
        report = probe.probe(node)
        _well_formed(report, probe, node, before)
        assert report.status is HealthStatus.critical, report.reason
        assert report.failing and all(c.message for c in report.failing), "failing checks say what is wrong"

    def test_a_hung_check_is_critical(self, probe_case: ProbeCase) -> None:
        if probe_case.hung is None:
            pytest.skip("this probe runs nothing that can hang")
        probe, node = probe_case.hung()
        before = time.time()
        report = probe.probe(node)
        _well_formed(report, probe, node, before)
        assert report.status is HealthStatus.critical, report.reason

    def test_that_does_not_apply_is_ok_and_skipped(self, probe_case: ProbeCase) -> None:
        if probe_case.not_applicable is None:
            pytest.skip("this probe applies to every node")
        probe, node = probe_case.not_applicable()
        report = probe.probe(node)
        _well_formed(report, probe, node, time.time())
        assert report.status is HealthStatus.ok
        assert [c.name for c in report.checks] == ["skipped"] and report.checks[0].message.startswith("skipped: ")
        assert report.checks[0].skipped and report.reason == f"{probe.name}: skipped ({report.checks[0].skipped})"

    def test_several_nodes_from_several_threads(self, probe_case: ProbeCase) -> None:
        probe, node = probe_case.healthy()
        nodes = [node.model_copy(update={"name": f"{node.name}-{i}"}) for i in range(4)]
        with ThreadPoolExecutor(max_workers=4) as pool:
            reports = list(pool.map(probe.probe, nodes))
        assert [r.node for r in reports] == [n.name for n in nodes]
        assert all(r.status is HealthStatus.ok for r in reports), [r.reason for r in reports]
