"""The campaign graph on its SQLite checkpointer: one superstep a round, and checkpoints of the
older graphs (four nodes; then `act` and `replan`) resumed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

from autoresearch.runner import RunnerState, build_graph


class Steps:
    """Records the steps run; ends the campaign at the `rounds`-th replan."""

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.calls: list[str] = []

    def propose(self, state: RunnerState) -> RunnerState:
        self.calls.append(f"propose {state.get('steering')}")
        return {"steering": []}

    def launch(self, state: RunnerState) -> RunnerState:
        self.calls.append(f"launch {state.get('steering')}")  # sees propose's update
        return {}

    def evaluate(self, state: RunnerState) -> RunnerState:
        self.calls.append("evaluate")
        return {}

    def replan(self, state: RunnerState) -> RunnerState:
        self.calls.append("replan")
        done = state.get("round", 0) + 1
        return {"round": done, "steering": [*state.get("steering", []), "a note"],
                "ended": "completed" if done >= self.rounds else None}


def _config() -> dict:
    return {"configurable": {"thread_id": "campaign"}, "recursion_limit": 100}


def test_a_round_is_one_checkpointed_superstep(tmp_path: Path) -> None:
    steps = Steps(rounds=2)
    with sqlite3.connect(tmp_path / "graph.db", check_same_thread=False) as conn:
        graph = build_graph(steps).compile(checkpointer=SqliteSaver(conn))
        graph.invoke({"steering": ["from chat"]}, _config(), durability="sync")
        history = list(graph.get_state_history(_config()))
    assert steps.calls == ["evaluate", "replan", "propose ['from chat', 'a note']", "launch []",
                           "evaluate", "replan"]  # fmt: skip
    assert [h.metadata["step"] for h in history] == [2, 1, 0, -1]  # input, then a checkpoint per round
    assert history[1].values["steering"] == []  # shown by propose in its round
    assert history[0].values["steering"] == ["a note"] and history[0].values["ended"] == "completed"


def _four_nodes(launch: object) -> StateGraph:
    old = StateGraph(RunnerState)
    old.add_node("propose", lambda state: {"steering": []})
    old.add_node("launch", launch)
    old.add_node("evaluate", lambda state: {})
    old.add_node("replan", lambda state: {})
    old.add_edge(START, "propose")
    old.add_edge("propose", "launch")
    old.add_edge("launch", "evaluate")
    old.add_edge("evaluate", "replan")
    old.add_edge("replan", END)
    return old


def _act_and_replan(launch: object) -> StateGraph:
    old = StateGraph(RunnerState)
    old.add_node("act", lambda state: {"steering": []})
    old.add_node("replan", launch)
    old.add_edge(START, "act")
    old.add_edge("act", "replan")
    old.add_edge("replan", END)
    return old


@pytest.mark.parametrize("older", [_four_nodes, _act_and_replan], ids=["four nodes", "act and replan"])
def test_an_older_graphs_checkpoint_cut_off_mid_round_resumes_as_a_new_round(tmp_path: Path, older) -> None:
    """A campaign killed mid-round by a runner of an older graph names a node this graph lacks:
    the runner starts a round, with the state kept."""

    def dies(state: RunnerState) -> RunnerState:
        raise KeyboardInterrupt  # the runner dies in its second node

    with sqlite3.connect(tmp_path / "graph.db", check_same_thread=False) as conn:
        with pytest.raises(KeyboardInterrupt):
            older(dies).compile(checkpointer=SqliteSaver(conn)).invoke({"round": 7, "steering": ["x"]}, _config(),
                                                                       durability="sync")  # fmt: skip
        steps = Steps(rounds=8)
        graph = build_graph(steps).compile(checkpointer=SqliteSaver(conn))
        snapshot = graph.get_state(_config())
        assert snapshot.next == () and snapshot.values["round"] == 7  # what `_drive` reads: start a round
        graph.invoke({**snapshot.values, "ended": None}, _config(), durability="sync")
    assert steps.calls == ["evaluate", "replan"]  # the replan that reaches round 8 ends the campaign
    assert graph.get_state(_config()).values["round"] == 8
