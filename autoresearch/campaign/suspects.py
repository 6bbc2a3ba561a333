"""The one rule that calls a result suspect (docs/results.md).

A trial is suspect when a health degradation (throttling, ECC, Xid: any probe at degraded or
worse) was seen on a node while one of its attempts ran there, or when its speed is below
`validity.min_speed_ratio` of the median speed of the campaign's complete trials on the same GPU
model (at least `MIN_PEERS` of them). A pure function of the trials' records, so every surface
(status, report, UI, MLflow, the runner's re-runs) agrees.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from autoresearch.campaign.records import TrialRecord, TrialState

MIN_PEERS = 3
"""Complete trials with a speed on a GPU model needed before speed can make one of them suspect."""


def suspect_reasons(trials: Sequence[TrialRecord], ratio: float) -> dict[int, str]:
    """Trial number -> why its result is suspect, for every suspect trial among `trials`."""
    complete = [t for t in trials if t.state is TrialState.complete]
    speeds: dict[str, list[float]] = {}
    for t in complete:
        if t.provenance is not None and t.provenance.speed is not None:
            speeds.setdefault(t.provenance.gpu_model, []).append(t.provenance.speed)
    out: dict[int, str] = {}
    for t in trials:
        prov = t.provenance
        if prov is None:
            continue
        why = [f"node {a.node} was degraded while attempt {a.attempt} ran: {'; '.join(a.degraded)}"
               for a in prov.attempts if a.degraded]
        peers = speeds.get(prov.gpu_model, [])
        if t.state is TrialState.complete and prov.speed is not None and len(peers) >= MIN_PEERS:
            median = statistics.median(peers)
            if prov.speed < ratio * median:
                why.append(f"ran at {prov.speed:.3g} {prov.speed_unit} on node {prov.nodes[-1]}, "
                           f"{prov.speed / median:.0%} of the median {median:.3g} on {prov.gpu_model} "
                           f"(below {ratio:g})")
        if why:
            out[t.number] = "; ".join(why)
    return out
