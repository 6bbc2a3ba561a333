"""The campaign graph: a round is one node, `round` (evaluate -> replan -> propose -> launch),
looping until the campaign ends.

The graph state is small (a round counter, a count of results the policy has seen, notes
from people not yet shown to the policy, and the final state once reached). Trials live in
the ledger, jobs in compute: every step reads what it needs from them, so a node killed
mid-way and run again from its start (LangGraph's resume) redoes nothing twice.

One superstep per round, and its checkpoint comes after the launch: nothing of LangGraph's
(a commit, a wait for its checkpoint thread) sits between a job's end, which ends `evaluate`,
and the next job's submit. The steps are ordered so that a round run again finds what is done:

- `evaluate` returns at once when no trial runs, or when proposed trials wait for their launch
  (the first round; a round cut off after propose; a launch gate just answered), and otherwise
  waits for a trial to end.
- `replan` takes steering notes from the inbox into the state, and `propose` shows them to the
  policy in the same round. A round killed in between loses only that list: each note is also in
  the campaign's research log (the inbox's handler appended it), which every proposal sees.
- propose finds the slots taken by the trials it admitted (proposed trials hold a slot) and
  launch finds their jobs (same trial, same idempotency key). A launch gate's `interrupt()`
  reruns the round the same way once answered.

A checkpoint of an older graph cut off mid-round (the four-node graph before 2026-12-04: propose,
launch, evaluate, replan; then `act` and `replan`) names nodes this graph lacks: LangGraph
finds nothing to run next, so the runner starts a round, with the state it kept.
"""

from __future__ import annotations

from typing import Protocol, TypedDict

from langgraph.graph import END, START, StateGraph

RECURSION_LIMIT = 1_000_000_000
"""Supersteps per invocation: a campaign loops (one per round) until its budget ends it."""


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


def round_of(nodes: Nodes, state: RunnerState) -> RunnerState:
    """evaluate, replan, propose and launch in turn, each seeing the updates of the ones before;
    a replan that ends the campaign ends the round."""
    update: RunnerState = {}
    for step in (nodes.evaluate, nodes.replan, nodes.propose, nodes.launch):
        update.update(step({**state, **update}))
        if update.get("ended"):
            break
    return update


def _after_round(state: RunnerState) -> str:
    return END if state.get("ended") else "round"


def build_graph(nodes: Nodes) -> StateGraph:
    """The uncompiled graph; compile it with a checkpointer."""
    graph = StateGraph(RunnerState)
    graph.add_node("round", lambda state: round_of(nodes, state))
    graph.add_edge(START, "round")
    graph.add_conditional_edges("round", _after_round, {"round": "round", END: END})
    return graph
