"""The one rule that calls a result suspect (docs/results.md).

A trial is suspect when a health degradation (throttling, ECC, Xid: any probe at degraded or
worse) was seen on a node while one of its attempts ran there, or when its speed is below
`validity.min_speed_ratio` of the median speed of the campaign's complete trials on the same GPU
model on *other* nodes (at least `MIN_PEERS` of them): a node's hardware can only be blamed against
other nodes, so on a single node (a laptop's virtual slots sharing one CPU) the machine's load
makes no trial suspect. A pure function of the trials' records, so every surface (status, report,
UI, MLflow, the runner's re-runs) agrees.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from autoresearch.campaign.states import TrialState

if TYPE_CHECKING:
    from autoresearch.campaign.records import TrialRecord

MIN_PEERS = 3
"""Complete trials with a speed on a GPU model needed before speed can make one of them suspect."""


def suspect_reasons(trials: Sequence[TrialRecord], ratio: float) -> dict[int, str]:
    """Trial number -> why its result is suspect, for every suspect trial among `trials`."""
    complete = [t for t in trials if t.state is TrialState.complete]
    speeds: dict[str, list[tuple[str, float]]] = {}
    for t in complete:
        if t.provenance is not None and t.provenance.speed is not None and t.provenance.nodes:
            speeds.setdefault(t.provenance.gpu_model, []).append((t.provenance.nodes[-1], t.provenance.speed))
    out: dict[int, str] = {}
    for t in trials:
        prov = t.provenance
        if prov is None:
            continue
        why = [f"node {a.node} was degraded while attempt {a.attempt} ran: {'; '.join(a.degraded)}"
               for a in prov.attempts if a.degraded]
        node = prov.nodes[-1] if prov.nodes else None
        peers = [speed for where, speed in speeds.get(prov.gpu_model, []) if where != node]
        if t.state is TrialState.complete and prov.speed is not None and len(peers) >= MIN_PEERS:
            import statistics  # here: only a campaign with enough peers on a GPU model needs it

            median = statistics.median(peers)
            if prov.speed < ratio * median:
                why.append(f"ran at {prov.speed:.3g} {prov.speed_unit} on node {node}, "
                           f"{prov.speed / median:.0%} of the median {median:.3g} on {prov.gpu_model} "
                           f"on other nodes (below {ratio:g})")
        if why:
            out[t.number] = "; ".join(why)
    return out
