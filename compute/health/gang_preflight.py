"""The gang preflight: a cross-node all-reduce every member runs before a multi-node attempt's argv.

The daemon never imports torch. It decides per attempt whether the preflight runs and with
which backend (`plan`), wraps each member's argv in `_gang_allreduce.py` run by the job's
interpreter (`wrap`), then reads the members' result files (`verdict`). Modes
(`HealthConfig.gang_preflight`):

- `auto` (default): runs where GPUs are real: nccl, when no member's node is virtual. A virtual
  node's slots have no GPU behind them, so the attempt is not checked (an event says so). A
  member on a host without nvidia-smi skips it as well (its log and the events say so).
- `always`: also on virtual nodes, with gloo on CPU there (checks the rendezvous and the
  network between the nodes; fault drills and tests use it).
- `off`: never.

A failed preflight (a rank that never joined, an NCCL error, a wrong sum, a hang) is an infra
failure of the attempt blamed on the rank at fault: the daemon appends a line starting with
`FAILED_MARKER` to that member's log (the classifier's `gang_preflight` rule, infra), so the
gang requeues without that node on the infra budget and the failure counts toward the node's
quarantine.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from compute.health.report import NodeTarget

SCRIPT = Path(__file__).with_name("_gang_allreduce.py")
FAILED_MARKER = "[autoresearch] gang preflight failed"
"""First words of the line that says a gang preflight failed (the `gang_preflight` rule's evidence)."""


class GangPreflightMode(str, enum.Enum):
    """When the cross-node all-reduce runs before a multi-node attempt."""

    auto = "auto"
    always = "always"
    off = "off"


@dataclass(frozen=True)
class Plan:
    """Whether (and how) an attempt's members run the preflight, and the event that says so."""

    backend: str | None
    """nccl or gloo; None: not run."""
    reason: str
    """One line for the attempt's events."""


def plan(mode: GangPreflightMode, nodes: Sequence[NodeTarget], timeout_s: float) -> Plan:
    """The preflight of an attempt whose members run on `nodes` (rank order)."""
    names = ", ".join(n.name for n in nodes)
    virtual = [n.name for n in nodes if n.virtual]
    if mode is GangPreflightMode.off:
        return Plan(None, "gang preflight off (health config gang_preflight: off)")
    if virtual and mode is GangPreflightMode.auto:
        return Plan(None, f"gang preflight skipped: virtual GPUs ({', '.join(virtual)} offer GPU slots with no "
                          "physical GPU behind them; set gang_preflight: always to check with gloo on CPU)")
    backend, why = ("gloo", "gloo on CPU: virtual GPU slots") if virtual else ("nccl", "nccl")
    return Plan(backend, f"gang preflight: an all-reduce ({why}) across {names} runs before the members' argv "
                         f"(timeout {timeout_s:g} s)")


def result_path(log_path: str) -> str:
    """Where a member's preflight writes its result: beside its log."""
    return f"{log_path}.preflight.json"


def wrap(argv: list[str], python: str, *, rank: int, world: int, master: tuple[str, int], backend: str,
         timeout_s: float, log_path: str, fault: bool = False) -> list[str]:
    """A member's argv, run by `python` after the preflight passes (`master`: rank 0's address and
    a port for the preflight's rendezvous, not the job's MASTER_PORT)."""
    return [
        python, str(SCRIPT), "--rank", str(rank), "--world", str(world), "--addr", master[0],
        "--port", str(master[1]), "--backend", backend, "--timeout", f"{timeout_s:g}",
        "--result", result_path(log_path), *(["--fault"] if fault else []), "--", *argv,
    ]


@dataclass(frozen=True)
class Result:
    """One member's preflight result (the JSON the script writes)."""

    rank: int
    ok: bool
    skipped: bool
    blame: int | None
    message: str
    seconds: float


@dataclass(frozen=True)
class Verdict:
    """What the members' results say together."""

    passed: bool
    blame: int | None
    """The rank at fault (when not passed)."""
    reason: str
    """One line for the attempt's events (`[autoresearch] ` + it goes into the blamed member's log)."""
    skipped: bool = False
    """Passed only because some member skipped it (no nvidia-smi or no torch on its node)."""


def _read(path: str) -> Result | None:
    try:
        data = json.loads(Path(path).read_text())
        return Result(int(data["rank"]), bool(data["ok"]), bool(data.get("skipped")), data.get("blame"),
                      str(data.get("message", "")), float(data.get("seconds", 0.0)))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not written yet (or being replaced)


def verdict(log_paths: Sequence[str], nodes: Sequence[str]) -> Verdict | None:
    """The preflight's outcome from the members' result files (rank order); None while pending.
    A failure is blamed on the rank a failed member names (its own, or a peer that never joined),
    preferring a member that blames itself."""
    results = [_read(result_path(p)) for p in log_paths]
    failed = [r for r in results if r is not None and not r.ok]
    if failed:
        first = next((r for r in failed if r.blame == r.rank), failed[0])
        blame = first.blame if first.blame is not None and 0 <= first.blame < len(nodes) else first.rank
        said = "" if blame == first.rank else f" (rank {first.rank} reports)"
        return Verdict(False, blame, f"gang preflight failed on rank {blame} ({nodes[blame]}){said}: {first.message}")
    if any(r is None for r in results):
        return None
    done = [r for r in results if r is not None]
    skipped = [r for r in done if r.skipped]
    if skipped:
        where = ", ".join(f"rank {r.rank} ({nodes[r.rank]})" for r in skipped)
        return Verdict(True, None, f"gang preflight skipped on {where}: {skipped[0].message}", skipped=True)
    slowest = max(r.seconds for r in done)
    return Verdict(True, None, f"gang preflight passed on all {len(done)} members in {slowest:.2f} s: {done[0].message}")
