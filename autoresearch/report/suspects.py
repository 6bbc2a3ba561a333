"""The report's "Suspect results" section: trials whose result may be biased by their hardware,
why, their re-run, and the nodes that produced them (docs/results.md)."""

from __future__ import annotations

from collections import Counter

from autoresearch.campaign import CampaignStatus


def suspect_section(status: CampaignStatus) -> list[str]:
    """Markdown lines of the section (a sentence when no result is suspect)."""
    lines = ["## Suspect results", ""]
    suspect = [t for t in status.trials if t.suspect]
    if not suspect:
        return lines + ["No result is suspect: no node was degraded while a trial ran there, and no trial ran "
                        "well below its peers' speed.", ""]
    rerun_by = {t.suspect_rerun_of: t for t in status.trials if t.suspect_rerun_of is not None}
    lines += ["Never declared best: each may be biased by its hardware. One that would have been the best is "
              "re-run on another node (`validity.rerun_suspect`).", "",
              "| # | value | nodes | why | re-run |", "| --- | --- | --- | --- | --- |"]
    for t in suspect:
        value = f"{t.value:.6g}" if t.value is not None else ""
        again = rerun_by.get(t.number)
        rerun = "" if again is None else f"#{again.number}" + (f" = {again.value:.6g}" if again.value is not None else
                                                                 f" ({again.state.value})")
        why = (t.suspect_reason or "").replace("|", "/")
        lines.append(f"| {t.number} | {value} | {', '.join(t.nodes)} | {why} | {rerun} |")
    nodes = Counter(node for t in suspect for node in dict.fromkeys(t.nodes))
    named = ", ".join(f"{node} ({count} trial{'s' if count > 1 else ''})" for node, count in nodes.most_common())
    return lines + ["", f"Nodes that produced suspect results: {named}. Check them (`autoresearch compute nodes`).", ""]
