"""The campaign graph: propose -> launch -> evaluate -> replan, looping until the campaign ends.

The graph state is small (a round counter, a count of results the policy has seen, notes
from people not yet shown to the policy, and the final state once reached). Trials live in
the ledger, jobs in compute: every node reads what it needs from them, so a node killed
mid-way and run again from its start (LangGraph's resume) redoes nothing twice.
"""

from __future__ import annotations

from typing import Protocol, TypedDict

from langgraph.graph import END, START, StateGraph

RECURSION_LIMIT = 1_000_000_000
"""Supersteps per invocation: a campaign loops (4 per round) until its budget ends it."""


class RunnerState(TypedDict, total=False):
    """What the graph checkpoints after every node (one thread per campaign)."""

    round: int
    """Replans so far."""
    finished_seen: int
    """Trials that had ended when the policy last replanned (it replans on new results only)."""
    steering: list[str]
    """Notes from people (inbox) not yet shown to the policy."""
    ended: str | None
    """The campaign's final state (completed, stopped) once it ends; None while it runs."""


class Nodes(Protocol):
    """The four steps of a round; each returns a partial state update."""

    def propose(self, state: RunnerState) -> RunnerState: ...

    def launch(self, state: RunnerState) -> RunnerState: ...

    def evaluate(self, state: RunnerState) -> RunnerState: ...

    def replan(self, state: RunnerState) -> RunnerState: ...


def _after_replan(state: RunnerState) -> str:
    return END if state.get("ended") else "propose"


def build_graph(nodes: Nodes) -> StateGraph:
    """The uncompiled graph; compile it with a checkpointer."""
    graph = StateGraph(RunnerState)
    graph.add_node("propose", nodes.propose)
    graph.add_node("launch", nodes.launch)
    graph.add_node("evaluate", nodes.evaluate)
    graph.add_node("replan", nodes.replan)
    graph.add_edge(START, "propose")
    graph.add_edge("propose", "launch")
    graph.add_edge("launch", "evaluate")
    graph.add_edge("evaluate", "replan")
    graph.add_conditional_edges("replan", _after_replan, {"propose": "propose", END: END})
    return graph
