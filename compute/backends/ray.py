"""The Ray backend: our scheduler decides, a Ray cluster runs.

Ray has no job priorities or preemption, so it only executes: the daemon's scheduler
still picks the node and GPU indices of every attempt, preempts, and keeps quarantined
nodes out. This backend maps that onto Ray:

- Nodes are the cluster's alive Ray nodes: name `<hostname>-<first 8 hex of the node
  id>`, GPU slots 0..N-1 from the node's `GPU` resource (logical GPUs in tests), CPUs from its `CPU` resource,
  `Node.address` = the Ray node id. A background thread re-reads the node table and the
  daemon re-syncs its nodes when it changes (`nodes_changed`): a dead node leaves.
- Each attempt runs through the node agent (`_ray_agent.NodeAgent`): one detached, named
  async actor per (home, node), pinned with NodeAffinitySchedulingStrategy(soft=False),
  reserving no Ray resources (our scheduler owns the GPUs). The agent spawns the command
  in its own session with CUDA_VISIBLE_DEVICES = our GPU indices, appends its output to
  the attempt's log path (on a shared path), or to its node's spool from which the backend
  brings it back (a remote store: compute/backends/ray_staging.py), carries out signals on
  the process group, and answers `run` with the exit code. One agent per node, not one
  actor per attempt: a Ray worker costs ~100 MB and ~1 s to start, an agent call ~1 ms.
- Storage (`--storage`, compute/storage.py): the daemon writes a sentinel there and each node
  is probed for it (`node_probes`). A node lacking the job's working directory or program
  that the daemon's host has ends the attempt with `NODE_UNFIT_MARKER` and the agent's
  message in its log: infra, retried on another node.
- An attempt whose agent died (node lost, agent killed) polls as `AttemptExit(None)`:
  the daemon records it lost and requeues the job elsewhere; the agent's watchers kill
  the orphaned processes. The agents' own heartbeat (compute/backends/ray_liveness.py) makes
  a node suspect (no new work) within a second of silence and settles its attempts as lost
  within seconds, well before Ray's own heartbeat timeout.
- Adoption: a restarted daemon connects to the same cluster in the home's namespace,
  finds the agents by name and asks them about each attempt.

Staging (`StagesNext`, compute/daemon_staging.py; not the storage staging of ray_staging.py): the
daemon hands an agent the next attempt for a slot (`NodeAgent.run_after`), which the agent starts
the moment the slot's attempt exits and answers with its start time (`began`), or takes back
(`recall`). A new backend takes back what a dead daemon left staged (`NodeAgent.unstage`).

`poll` never blocks: each attempt's `run` result is watched from the moment it is launched
(a callback on its future, `ObjectRef.future()`), which marks it done and wakes the daemon
through a pipe (`wake_fds`), so exits are seen when they happen; a background thread
re-reads the node table and brings staged attempts' output back.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import ActorUnavailableError, GetTimeoutError, RayError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
from tenacity import retry, retry_if_exception, stop_after_attempt, wait_exponential

from compute.attempt_logs import append_log
from compute.backends._ray_agent import NodeAgent, NodeUnfit
from compute.backends.base import AttemptExit, LaunchError, LaunchRequest
from compute.backends.ray_address import resolve_ray_address
from compute.backends.ray_health import on_ray_nodes
from compute.backends.ray_liveness import BEAT_S, LATE_S, AgentBeats
from compute.backends.ray_staging import PUMP_S, LogPump, Staging, resolves_here
from compute.errors import ComputeError
from compute.jobenv import AR_CHECKPOINT_DIR
from compute.health.report import HealthProbe
from compute.health.rules import NODE_UNFIT_MARKER
from compute.records import Node
from compute.storage import Storage, StorageProbe, write_sentinel

log = logging.getLogger("compute.ray")
_AGENT = ray.remote(NodeAgent)
_CALL_TIMEOUT_S = 30.0
_BEGUN_S = 5.0
"""How long `began` waits for a staged attempt's answer, which its agent sends right after the
predecessor's exit (it may arrive just after that exit's own)."""
_SUSPECT_S = 30.0
"""A node whose agent died is offered again after this long if Ray still lists it alive."""


def namespace_of(home: Path) -> str:
    """The Ray namespace of one compute home: its agents' names never clash with another's."""
    return "autoresearch-" + hashlib.sha256(str(home).encode()).hexdigest()[:16]


def node_name(info: dict[str, Any]) -> str:
    """Our stable name for a Ray node (an entry of `ray.nodes()`)."""
    host = info.get("NodeManagerHostname") or info.get("NodeName") or "ray"
    return f"{re.sub(r'[^A-Za-z0-9._-]+', '-', host)}-{info['NodeID'][:8]}"


def _client_server_failed(err: BaseException) -> bool:
    """A Ray client server that the cluster's proxier could not start (seen on a loaded head: not
    in time, or the new server process died while the proxier waited for it, which fails the
    connection's initialization from `start_specific_server`): transient, unlike a wrong address
    or auth mode."""
    text = str(err)
    return "Starting Ray client server failed" in text or "start_specific_server" in text


@retry(retry=retry_if_exception(_client_server_failed), stop=stop_after_attempt(3),
       wait=wait_exponential(multiplier=1, max=4), reraise=True)
def _connect(target: str, namespace: str) -> None:
    """`ray.init` on a running cluster, retrying a client server that failed to start."""
    ray.init(address=target, namespace=namespace, log_to_driver=False, configure_logging=False)


def cluster_nodes(infos: list[dict[str, Any]] | None = None) -> list[Node]:
    """The alive nodes of the connected cluster (or of `infos`, entries of `ray.nodes()`), sorted by name."""
    nodes = [
        Node(name=node_name(n), gpus=list(range(int(n["Resources"].get("GPU", 0)))), address=n["NodeID"],
             cpus=float(n["Resources"].get("CPU", 0)))
        for n in (ray.nodes() if infos is None else infos) if n.get("Alive")
    ]
    return sorted(nodes, key=lambda n: n.name)


class RayBackend:
    """Attempts on the nodes of a Ray cluster (see the module docstring)."""

    name = "ray"

    def __init__(self, home: Path, address: str | None = None, local_gpus: int | None = None,
                 node_poll_s: float = 1.0, storage: Storage | None = None) -> None:
        target = resolve_ray_address(address)
        self.namespace = namespace_of(home)
        self.address = target
        try:
            if target == "local":  # a fresh instance owned by this daemon: it ends with it
                ray.init(address="local", namespace=self.namespace, num_gpus=local_gpus, include_dashboard=False,
                         log_to_driver=False, configure_logging=False)
            else:
                _connect(target, self.namespace)
        except (ConnectionError, OSError, RayError, RuntimeError, ValueError) as err:
            if target == "local":
                raise ComputeError(f"could not start a local Ray instance: {err}. Check RAY_TMPDIR (a short, "
                                   "writable path) and free memory, or give --address of a running cluster") from err
            raise ComputeError(
                f"could not connect to the Ray cluster at {address!r}: {err}. Check that the cluster runs "
                "(`ray status`), that the address is right, and that RAY_AUTH_MODE matches the cluster's"
            ) from err
        self._node_poll_s = node_poll_s
        self.storage = storage or Storage(uri=str(home), shared=True)
        try:
            self._sentinel = write_sentinel(self.storage, self.namespace)
        except (ComputeError, OSError) as err:
            ray.shutdown()
            raise ComputeError(f"the daemon cannot write to its storage {self.storage.uri}: {err}. Check the path "
                               "or URI and the credentials in the daemon's environment") from err
        self._staging = None if self.storage.shared else Staging(self.storage, home)
        self._pump = LogPump()
        self._log_of: dict[str, str] = {}
        """Key -> the attempt's log path here (for the line a NodeUnfit end leaves there)."""
        self._nodes = cluster_nodes()
        self._lock = threading.Lock()
        self._runs: dict[str, Future[Any] | None] = {}
        """Keys of attempts being watched -> the future of the agent's `run`/`wait` result (None: never started)."""
        self._done: set[str] = set()
        """Keys whose result is ready but not yet polled (set by `_ended`, in Ray's thread)."""
        self._agent_of: dict[str, tuple[str, Any]] = {}
        """Key -> (Ray node id, agent handle) of each attempt this backend knows."""
        self._suspect: dict[str, float] = {}
        """Ray node id -> when its agent was seen dead: kept out of the node table meanwhile."""
        self._beats = AgentBeats()
        self._late: set[str] = set()
        """Ray node ids whose agent is silent (suspect): no new work there until it answers (`suspect_nodes`)."""
        self._lost: set[str] = set()
        """Keys of attempts whose node was found lost by the heartbeat: they poll as lost."""
        self._raylets: dict[str, tuple[str, int]] = {}
        """Ray node id -> (address, port) of its raylet, from the last read of the node table."""
        self._agents: dict[str, Any] = {}
        self._begun: dict[str, Future[Any]] = {}
        """Keys of staged attempts -> the future of their agent's `run_after` answer (when they started)."""
        self._forgets: list[ray.ObjectRef] = []
        self._changed: list[Node] | None = None
        self._unstage()
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="ray-watch", daemon=True)
        self._thread.start()

    # -- nodes ----------------------------------------------------------------------

    def nodes(self) -> list[Node]:
        return list(self._nodes)

    def nodes_changed(self) -> list[Node] | None:
        with self._lock:
            changed, self._changed = self._changed, None
        return changed

    def suspect_nodes(self) -> dict[str, str]:
        """SuspectsNodes: nodes whose agent fell silent (compute/backends/ray_liveness.py)."""
        late = self._late
        return {n.name: f"suspect: its Ray agent has not answered for {LATE_S:g} s or more"
                for n in self._nodes if n.address in late}

    def node_id(self, name: str) -> str | None:
        """The Ray node id of one of our node names (None if it is not in the cluster)."""
        return next((n.address for n in self._nodes if n.name == name), None)

    def master_address(self, node: str) -> tuple[str, int]:
        """HostsGangs: the node's IP as Ray knows it, and a port its agent found free there."""
        node_id = self.node_id(node)
        info = next((n for n in ray.nodes() if n["NodeID"] == node_id and n.get("Alive")), None)
        if node_id is None or info is None:
            raise LaunchError(f"node {node} left the Ray cluster before its gang started", infra=True)
        port = ray.get(self._agent(node_id, node).free_port.remote(), timeout=60)
        return str(info["NodeManagerAddress"]), int(port)

    # -- attempts -------------------------------------------------------------------

    def on_nodes(self, probes: Sequence[HealthProbe]) -> list[HealthProbe]:
        """ProbesOnNodes: each probe runs as a Ray task pinned to the node it probes."""
        return on_ray_nodes(probes, self.node_id)

    def node_probes(self) -> list[HealthProbe]:
        """NeedsOnNodes: the storage is reachable on each node and holds this daemon's sentinel."""
        return [StorageProbe(self.storage, self.namespace, self._sentinel)]

    def _agent(self, node_id: str, node: str) -> Any:
        agent = self._agents.get(node_id)
        if agent is None:
            agent = _AGENT.options(
                name=f"agent-{node_id}", namespace=self.namespace, lifetime="detached", get_if_exists=True,
                num_cpus=0, max_restarts=0, max_concurrency=100_000,
                scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False),
            ).remote(node)
            self._agents[node_id] = agent
        return agent

    def _unstage(self) -> None:
        """An earlier daemon may have died with attempts staged on the agents: take them back, and
        stop those that started unrecorded (their jobs are still pending here)."""
        for node in self._nodes:
            agent = self._find_agent(node.address)
            try:
                killed = [] if agent is None else ray.get(agent.unstage.remote(), timeout=_CALL_TIMEOUT_S)
            except RayError as err:
                log.warning("could not take staged attempts back from the agent on %s: %s", node.name, err)
                continue
            if killed:
                log.warning("stopped %s on %s: started from staging after the last daemon died, unrecorded",
                            ", ".join(killed), node.name)

    def _find_agent(self, node_id: str) -> Any | None:
        if node_id not in self._agents:
            try:
                self._agents[node_id] = ray.get_actor(f"agent-{node_id}", namespace=self.namespace)
            except ValueError:
                return None
        return self._agents[node_id]

    def launch(self, request: LaunchRequest) -> dict[str, Any]:
        node_id = self.node_id(request.node)
        if node_id is None:  # it left the cluster since the daemon placed the attempt: lost, requeued
            with self._lock:
                self._runs[request.key] = None
            return {"ray_node_id": None, "namespace": self.namespace}
        agent, args, handle = self._prepare(request, node_id)
        self._watch_result(request.key, agent.run.remote(*args))
        return handle

    def stage(self, request: LaunchRequest, after: str) -> dict[str, Any]:
        """StagesNext: the agent of `after`'s node starts `request` when `after` exits there."""
        node_id = self._agent_of[after][0]
        agent, args, handle = self._prepare(request, node_id)
        self._begun[request.key] = agent.run_after.remote(args[0], after, *args[1:]).future()
        return handle

    def began(self, key: str) -> float | None:
        """StagesNext: the staged attempt's start as its agent answered it (the agent answers as soon as
        it started it, right after the predecessor's exit); None when it did not start."""
        future = self._begun.pop(key)
        node_id = self._agent_of[key][0]
        try:  # no wait for the answer of an agent that fell silent
            at = future.result(timeout=0 if node_id in self._late or node_id in self._suspect else _BEGUN_S)
        except (RayError, TimeoutError) as err:  # its node is lost or silent: it must not start later
            log.warning("staged attempt %s did not start: %s", key, err)
            self.signal(key, signal.SIGKILL)
            at = None
        if at is None:
            self._forget(key)
        else:
            self._rewatch(key)
        return at

    def recall(self, key: str) -> float | None:
        """StagesNext: ask its agent to take the staged attempt back (one round trip)."""
        agent = self._agent_of[key][1]
        try:
            at = ray.get(agent.recall.remote(key), timeout=_CALL_TIMEOUT_S)
        except RayError:  # its agent is gone (and the attempt with it) or silent: make sure it never runs
            self.signal(key, signal.SIGKILL)
            at = None
        if at is None:
            self._begun.pop(key, None)
            self._forget(key)
        return at

    def _prepare(self, request: LaunchRequest, node_id: str) -> tuple[Any, tuple[Any, ...], dict[str, Any]]:
        """The agent of `node_id`, the arguments of its `run` for `request`, and the attempt's handle."""
        if not Path(request.cwd).is_dir():
            raise LaunchError(f"working directory {request.cwd} does not exist")
        stage = None
        if self._staging is not None:
            try:
                stage = self._staging.stage(request.key.split(".", 1)[0], request.cwd,
                                            request.env.get(AR_CHECKPOINT_DIR.name))
            except ComputeError as err:
                raise LaunchError(f"could not upload its working directory: {err}", infra=True) from err
        agent = self._agent(node_id, request.node)
        self._log_of[request.key] = str(request.log_path)
        if stage is not None:
            self._pump.add(request.key, agent, str(request.log_path))
        self._agent_of[request.key] = (node_id, agent)
        args = (request.key, list(request.argv), dict(request.env), request.cwd, str(request.log_path),
                stage, resolves_here(request.argv[0], request.cwd, request.env))
        return agent, args, {"ray_node_id": node_id, "namespace": self.namespace, "log": str(request.log_path),
                             "staged": stage is not None}

    def _watch_result(self, key: str, ref: ray.ObjectRef) -> None:
        """Watch the agent's answer about `key` from now on: its end marks it done and wakes the daemon."""
        future = ref.future()
        with self._lock:
            self._runs[key] = future
            self._done.discard(key)
        future.add_done_callback(lambda f: self._ended(key, f))  # at once if it is done already

    def _ended(self, key: str, future: Future[Any]) -> None:
        with self._lock:
            if self._runs.get(key) is future:
                self._done.add(key)
                self._wake()

    def poll(self, key: str) -> AttemptExit | None:
        with self._lock:
            future = self._runs[key]
            done = key in self._done
        if future is None:
            return AttemptExit(None)
        if not done:
            return None
        if key in self._lost:  # its node fell silent: if its agent lives after all, the attempt must not run on
            self.signal(key, signal.SIGKILL)
            return AttemptExit(None)
        try:
            code = future.result()
        except RayTaskError as err:
            if isinstance(err.cause, NodeUnfit):  # the node lacks what the daemon's host has: infra, say what
                append_log(self._log_of.get(key, ""), [f"{NODE_UNFIT_MARKER} {err.cause}"])
                return AttemptExit(err.cause.code)
            # the agent failed to start it: like a shell that cannot exec
            log.warning("attempt %s could not start: %s", key, err)
            return AttemptExit(127)
        except ActorUnavailableError:  # a transient loss of contact: ask again
            self._rewatch(key)
            return None
        except RayError as err:  # the agent died, likely with its node: nobody knows how the attempt ended
            log.warning("attempt %s lost, its Ray agent died: %s", key, err)
            self._suspect_node(self._agent_of[key][0])
            return AttemptExit(None)
        self._pump.drain(key)
        return AttemptExit(code)

    def _rewatch(self, key: str) -> None:
        self._watch_result(key, self._agent_of[key][1].wait.remote(key))

    def signal(self, key: str, signum: int) -> None:
        placed = self._agent_of.get(key)
        if placed is not None:
            placed[1].signal.remote(key, signum)

    def adopt(self, key: str, handle: dict[str, Any] | None) -> AttemptExit | None:
        known = (handle or {}).get("ray_node_id")
        for node_id in [known] if known else [n.address for n in self._nodes]:
            agent = self._find_agent(node_id)
            if agent is None:
                continue
            try:
                status = ray.get(agent.status.remote(key), timeout=_CALL_TIMEOUT_S)
            except GetTimeoutError:  # slow, not gone: watch it
                status = {"state": "running"}
            except RayError:
                continue
            if status["state"] == "unknown":
                continue
            self._agent_of[key] = (node_id, agent)
            if handle is not None and "log" in handle:
                self._log_of[key] = handle["log"]
            if handle is not None and handle.get("staged"):  # its output is still to come from the node
                self._pump.add(key, agent, handle["log"])
                self._pump.drain(key)
            if status["state"] == "ended":
                return AttemptExit(status["exit_code"])
            self._rewatch(key)
            return None
        return AttemptExit(None)

    def release(self, key: str) -> None:
        with self._lock:
            self._runs.pop(key, None)
            self._done.discard(key)
            self._lost.discard(key)
        placed = self._forget(key)
        if placed is not None:
            self._forgets.append(placed[1].forget.remote(key))
            if len(self._forgets) > 1000:
                self._forgets = ray.wait(self._forgets, num_returns=len(self._forgets), timeout=0)[1]

    def _forget(self, key: str) -> tuple[str, Any] | None:
        """Drop what is kept here about an attempt; return where it was (Ray node id, agent). (A staged
        attempt that never started is forgotten by its agent itself, which must keep a recall that came
        first until its `run_after` arrives.)"""
        self._pump.drop(key)
        self._log_of.pop(key, None)
        return self._agent_of.pop(key, None)

    # -- waking the daemon ----------------------------------------------------------

    def wake_fds(self) -> list[int]:
        try:
            while os.read(self._wake_r, 4096):
                pass
        except BlockingIOError:
            pass
        with self._lock:
            if self._done or self._changed is not None:
                self._wake()  # still unhandled: keep the daemon awake
        return [self._wake_r]

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"w")
        except BlockingIOError:
            pass

    def _watch(self) -> None:
        """Thread: ping the agents every `BEAT_S` (waking the daemon when a node turns suspect or answers
        again, settling lost nodes' attempts), pump staged attempts' logs every `PUMP_S` and re-read the
        node table every `node_poll_s`."""
        next_nodes = next_pump = 0.0
        while not self._stop.wait(BEAT_S):
            try:
                with self._lock:
                    agents = dict(self._agents)
                late, lost = self._beats.beat(agents, self._raylets)
                if late != self._late:
                    self._late = late  # before its attempts are settled: their jobs must not go back there
                    self._wake()
                for node_id in lost:
                    self._node_lost(node_id)
                if time.monotonic() >= next_pump:
                    next_pump = time.monotonic() + PUMP_S
                    self._pump.pump()
                if time.monotonic() >= next_nodes:
                    next_nodes = time.monotonic() + self._node_poll_s
                    self._refresh_nodes()
            except Exception:  # never let the thread die: attempts are still watched without it
                if self._stop.is_set():
                    return
                log.exception("ray watcher")
                self._stop.wait(1.0)

    def _node_lost(self, node_id: str) -> None:
        """The heartbeat found the node lost: its attempts poll as lost now, and it gets no more work."""
        self._suspect_node(node_id)  # out of the node table first: the lost attempts' jobs must go elsewhere
        keys = [key for key, (on, _) in list(self._agent_of.items()) if on == node_id]
        log.warning("Ray node %s lost (its agent fell silent): %d attempt(s) there are lost", node_id, len(keys))
        with self._lock:
            for key in keys:
                if key in self._runs:
                    self._lost.add(key)
                    self._done.add(key)
            self._wake()

    def _suspect_node(self, node_id: str) -> None:
        """Its agent died: offer the node no more work until Ray says whether it lives (the
        requeued attempt must not go back there), and start a fresh agent if it returns."""
        with self._lock:
            self._suspect.setdefault(node_id, time.monotonic())
            self._agents.pop(node_id, None)
        self._beats.forget(node_id)
        self._refresh_nodes()

    def _refresh_nodes(self) -> None:
        infos = ray.nodes()
        nodes = cluster_nodes(infos)
        alive = {n.address for n in nodes}
        self._raylets = {i["NodeID"]: (str(i.get("NodeManagerAddress")), int(i.get("NodeManagerPort") or 0))
                         for i in infos if i.get("Alive")}
        with self._lock:
            now = time.monotonic()
            self._suspect = {i: t for i, t in self._suspect.items() if i in alive and now - t < _SUSPECT_S}
            nodes = [n for n in nodes if n.address not in self._suspect]
            if nodes != self._nodes:
                self._nodes = nodes
                self._changed = nodes
                self._wake()

    # -- the end --------------------------------------------------------------------

    def close(self) -> None:
        """Disconnect; agents with no attempts left exit, the others keep their attempts running.
        Staged attempts are recalled (their jobs are still pending); one that started meanwhile
        is stopped, since no daemon will record it."""
        self._stop.set()
        self._thread.join(timeout=5)
        try:
            for key in list(self._begun):
                if self.recall(key) is not None:
                    self.signal(key, signal.SIGKILL)
            if self._forgets:
                ray.wait(self._forgets, num_returns=len(self._forgets), timeout=10)
            for agent in self._agents.values():
                try:
                    if ray.get(agent.running.remote(), timeout=10) == 0:
                        ray.kill(agent)
                except RayError:
                    pass
        finally:
            ray.shutdown()
            os.close(self._wake_r)
            os.close(self._wake_w)

