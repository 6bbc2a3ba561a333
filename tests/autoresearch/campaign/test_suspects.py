"""Speed makes a result suspect only against other nodes: one node's load is not its hardware."""

from __future__ import annotations

from autoresearch.campaign import TrialRecord, TrialState
from autoresearch.campaign.suspects import suspect_reasons
from autoresearch.campaign.validity import AttemptProvenance, Provenance


def _trial(n: int, node: str, speed: float) -> TrialRecord:
    provenance = Provenance(attempts=[AttemptProvenance(attempt=1, node=node, started_at=0.0, ended_at=1.0)], speed=speed)
    return TrialRecord(number=n, state=TrialState.complete, params={"x": 0.5}, value=1.0, provenance=provenance)


def test_on_one_node_a_slow_trial_is_load_not_hardware() -> None:
    """The quick start on a laptop: 4 virtual slots of one node share its CPU."""
    trials = [_trial(n, "local", speed) for n, speed in enumerate([2.0, 1.9, 2.1, 2.0, 1.5])]
    assert suspect_reasons(trials, 0.85) == {}


def test_a_trial_slow_against_other_nodes_is_suspect() -> None:
    trials = [_trial(0, "a", 2.0), _trial(1, "b", 2.1), _trial(2, "c", 1.9), _trial(3, "d", 1.4)]
    reasons = suspect_reasons(trials, 0.85)
    assert list(reasons) == [3] and "on node d" in reasons[3] and "on other nodes" in reasons[3]
    assert suspect_reasons(trials[:3] + [_trial(3, "a", 1.4)], 0.85) == {}  # node a's own peers are only 2
