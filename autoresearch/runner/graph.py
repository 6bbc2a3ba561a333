"""The campaign graph: a round is `act` (propose -> launch -> evaluate) then `replan`, looping
until the campaign ends.

The graph state is small (a round counter, a count of results the policy has seen, notes
from people not yet shown to the policy, and the final state once reached). Trials live in
the ledger, jobs in compute: every step reads what it needs from them, so a node killed
mid-way and run again from its start (LangGraph's resume) redoes nothing twice.

Two supersteps per round, so two checkpoints (each one a commit, and a wait for LangGraph's
checkpoint thread, which on a busy machine cost more than the commit). The four steps are
grouped so that a node run again finds its earlier steps done:

- `act` runs propose, launch and evaluate. Run again, propose finds the slots taken by the
  trials it admitted (proposed trials hold a slot) and launch finds their jobs (same trial, same
  idempotency key), so it goes on to wait for jobs. A launch gate's `interrupt()` reruns it the
  same way once answered.
- `replan` is a node of its own: it takes steering notes from the inbox into the state, and
  its checkpoint is what keeps them until propose shows them to the policy.

A checkpoint of the four-node graph before 2026-12-04 (nodes propose, launch, evaluate, replan)
cut off mid-round names nodes this graph lacks: LangGraph finds nothing to run next, so the
runner starts a round, with the state it kept.
"""

from __future__ import annotations

from typing import Protocol, TypedDict

from langgraph.graph import END, START, StateGraph

RECURSION_LIMIT = 1_000_000_000
"""Supersteps per invocation: a campaign loops (2 per round) until its budget ends it."""


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


def act(nodes: Nodes, state: RunnerState) -> RunnerState:
    """propose, launch and evaluate in turn, each seeing the updates of the ones before."""
    update: RunnerState = {}
    for step in (nodes.propose, nodes.launch, nodes.evaluate):
        update.update(step({**state, **update}))
    return update


def _after_replan(state: RunnerState) -> str:
    return END if state.get("ended") else "act"


def build_graph(nodes: Nodes) -> StateGraph:
    """The uncompiled graph; compile it with a checkpointer."""
    graph = StateGraph(RunnerState)
    graph.add_node("act", lambda state: act(nodes, state))
    graph.add_node("replan", nodes.replan)
    graph.add_edge(START, "act")
    graph.add_edge("act", "replan")
    graph.add_conditional_edges("replan", _after_replan, {"act": "act", END: END})
    return graph
