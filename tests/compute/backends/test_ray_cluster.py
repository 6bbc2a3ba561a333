"""Several Ray nodes on one machine (a head and 2 workers, 2 logical GPUs each): our scheduler
places, preempts and requeues across them, and a worker removed mid-job loses its attempt,
which is requeued and finishes on another node."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from compute import AttemptOutcome, Client, JobSpec, JobState
from tests.compute.helpers import gate_job, log_so_far, log_text, quick_job, wait_state, wait_until

pytestmark = pytest.mark.ray
TWO = {"gpus": 2}


@pytest.fixture(scope="module")
def with_workers(ray_cluster: Any) -> Iterator[Any]:
    """The session cluster; its worker nodes are removed after this module (head only again)."""
    yield ray_cluster
    for node in list(ray_cluster.worker_nodes):
        ray_cluster.remove_node(node)


@pytest.fixture
def three_nodes(with_workers: Any) -> Any:
    """The session cluster with 2 worker nodes beside the head (added as needed)."""
    while len(with_workers.worker_nodes) < 2:
        with_workers.add_node(num_cpus=1, num_gpus=2)
    return with_workers


@pytest.fixture
def client(three_nodes: Any, start_compute: Callable[..., Client]) -> Client:
    client = start_compute(backend="ray", ray_address=three_nodes.address, gpus=None)
    assert sorted(len(n.gpus) for n in client.nodes()) == [2, 2, 2]
    return client


def trap_job(gate: Path, **fields: Any) -> JobSpec:
    """Runs until `gate` exists; on SIGTERM says so and exits 0 (a checkpoint); prints its agent's pid."""
    script = (f"trap 'echo checkpointed; exit 0' TERM; echo \"attempt $AR_ATTEMPT agent $PPID\"; "
              f'while [ ! -e "{gate}" ]; do sleep 0.05; done')
    return JobSpec(argv=["sh", "-c", script], **fields)


def raylet_pid(agent_pid: int) -> int:
    """The parent of a Ray worker process is its node's raylet."""
    stat = Path(f"/proc/{agent_pid}/stat").read_text()
    return int(stat[stat.rfind(")") + 2:].split()[1])


def node_raylets(cluster: Any) -> dict[str, int]:
    """Ray node id -> raylet pid, for every node of the cluster."""
    return {n.node_id: n.all_processes["raylet"][0].process.pid for n in cluster.list_all_nodes()}


def agent_of(client: Client, job_id: str, attempt: int) -> int:
    text = wait_until(lambda: log_so_far(client, job_id, attempt), what=f"{job_id} attempt {attempt} output")
    return int(text.split("agent ")[1].split()[0])


def test_preemption_and_priorities_across_nodes(client, three_nodes, tmp_path):
    gate = tmp_path / "open"
    lows = [client.submit(trap_job(gate, name=f"low-{i}", priority="low", resources=TWO)) for i in range(3)]
    for job in lows:
        agent_of(client, job.id, 1)
    placed = {client.get(j.id).attempts[0].node for j in lows}
    assert len(placed) == 3  # one 2-GPU job per node
    queued = client.submit(quick_job(name="queued-low", priority="low", resources=TWO))
    high = client.submit(quick_job(name="high", priority="high", resources=TWO))
    high_done = client.wait(high.id, timeout=90)[0]
    assert high_done.state == JobState.succeeded
    preempted = [j for j in (client.get(j.id) for j in lows) if j.attempts[0].outcome == AttemptOutcome.preempted]
    assert len(preempted) == 1
    victim = preempted[0]
    assert high_done.attempts[0].node == victim.attempts[0].node
    assert high_done.attempts[0].started_at >= victim.attempts[0].ended_at
    assert "checkpointed" in log_text(client, victim.id, 1)
    gate.touch()
    jobs = client.wait([*(j.id for j in lows), queued.id], timeout=90)
    assert all(j.state == JobState.succeeded for j in jobs)
    victim = client.get(victim.id)
    assert victim.retries_used == 0 and "attempt 2 agent" in log_text(client, victim.id, 2)
    queued_done = jobs[-1]
    assert queued_done.attempts[0].started_at > high_done.attempts[0].started_at  # high went first
    # Each attempt really ran on the Ray node our scheduler chose: its agent's parent is that node's raylet.
    raylets = node_raylets(three_nodes)
    by_name = {n.name: n.address for n in client.nodes()}
    for job in lows:
        first = client.get(job.id).attempts[0]
        assert raylet_pid(agent_of(client, job.id, 1)) == raylets[by_name[first.node]]


def test_a_removed_node_loses_its_attempt_which_finishes_on_another_node(client, three_nodes, tmp_path):
    gate = tmp_path / "open"
    jobs = [client.submit(gate_job(gate, name=f"job-{i}", resources=TWO)) for i in range(2)]
    for job in jobs:
        wait_state(client, job.id, JobState.running)
        wait_until(lambda job=job: log_so_far(client, job.id, 1), what="job output")
    head = three_nodes.head_node.node_id
    by_address = {n.address: n.name for n in client.nodes()}
    on_worker = next(j for j in (client.get(j.id) for j in jobs) if j.attempts[0].node != by_address[head])
    dead_name = on_worker.attempts[0].node
    dead = next(n for n in three_nodes.worker_nodes if by_address[n.node_id] == dead_name)
    three_nodes.remove_node(dead)
    moved = wait_until(lambda: len((j := client.get(on_worker.id)).attempts) == 2 and j, timeout=90,
                       what="the lost attempt requeued")
    assert moved.attempts[0].outcome == AttemptOutcome.lost and moved.retries_used == 0
    assert moved.attempts[1].node != dead_name
    wait_until(lambda: dead_name not in {n.name for n in client.nodes()}, what="the dead node left the node table")
    assert "node_removed" in [e.kind for e in client.events(node=dead_name)]
    # The lost attempt's processes died with their agent (its watcher killed them): only the
    # two live attempts still wait on the gate.
    wait_until(lambda: len(_gate_shells(gate)) == 2, what="orphaned attempt killed")
    gate.touch()
    done = client.wait([j.id for j in jobs], timeout=90)
    assert all(j.state == JobState.succeeded for j in done)


def _gate_shells(gate: Path) -> list[int]:
    """Pids of `sh -c` processes whose command line waits on `gate`."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if proc.name.isdigit() and cmd[:2] == [b"sh", b"-c"] and str(gate).encode() in cmd[2]:
            pids.append(int(proc.name))
    return pids


def test_health_probes_run_on_each_node_and_a_failing_node_gets_no_work(three_nodes, start_compute, tmp_path):
    probed, bad = tmp_path / "probed", tmp_path / "bad"
    bad.write_text("")
    command = ["sh", "-c", f'echo "$AR_NODE $PPID" >> "{probed}"; ! grep -qx "$AR_NODE" "{bad}"']
    client = start_compute(backend="ray", ray_address=three_nodes.address, gpus=None,
                           health={"command": command, "probe_interval_s": 0.5, "cuda": False})
    names = {n.name: n.address for n in client.nodes()}
    raylets = node_raylets(three_nodes)
    # Every node's probe ran on that node: the probe's Ray worker is a child of the node's raylet.
    seen = wait_until(lambda: _probes(probed, names), what="a probe on every node")
    assert all(raylet_pid(worker) == raylets[names[name]] for name, worker in seen.items())
    sick = sorted(names)[1]
    bad.write_text(f"{sick}\n")
    wait_until(lambda: {n.name: n.state.value for n in client.nodes()}[sick] == "quarantined", what="quarantine")
    gate = tmp_path / "open"
    jobs = [client.submit(gate_job(gate, resources=TWO)) for _ in range(3)]
    for job in jobs[:2]:
        wait_state(client, job.id, JobState.running)
    assert client.get(jobs[2].id).state == JobState.pending  # two healthy nodes, both busy
    assert sick not in {client.get(j.id).attempts[0].node for j in jobs[:2]}
    gate.touch()
    done = client.wait([j.id for j in jobs], timeout=90)
    assert all(j.state == JobState.succeeded and j.attempts[0].node != sick for j in done)


def _probes(log: Path, names: dict[str, str]) -> dict[str, int] | None:
    """Node name -> pid of the Ray worker that ran its latest probe, once every node was probed."""
    try:
        lines = log.read_text().splitlines()
    except OSError:
        return None
    seen = {name: int(pid) for name, pid in (line.split() for line in lines if line.strip())}
    return seen if set(seen) >= set(names) else None


def test_a_gang_runs_its_members_on_distinct_ray_nodes_with_rank_0s_address(client, three_nodes):
    wiring = 'echo "$AR_NNODES $AR_NODE_RANK $MASTER_ADDR $MASTER_PORT $CUDA_VISIBLE_DEVICES"'
    job = client.submit(JobSpec(argv=["sh", "-c", wiring], resources={"gpus": 2, "nodes": 2}))
    done = client.wait(job.id, timeout=120)[0]
    assert done.state is JobState.succeeded, done.state_reason
    assert len({m.node for m in done.attempts[0].members}) == 2
    lines = [client.log_path(job.id, rank=r).read_text().split() for r in (0, 1)]
    assert [line[:2] for line in lines] == [["2", "0"], ["2", "1"]]
    ip = three_nodes.head_node.node_ip_address  # every node of this test cluster runs on this host
    assert lines[0][2] == lines[1][2] == ip and lines[0][3] == lines[1][3] and lines[0][3].isdigit()


@pytest.mark.slow
def test_a_ddp_gang_under_torchrun_trains_across_two_ray_nodes(client, tmp_path):
    pytest.importorskip("torch")
    from tests.compute.test_gangs_torch import curve, ddp_job

    job = client.submit(ddp_job(tmp_path, "ray-ddp"))
    done = client.wait(job.id, timeout=300)[0]
    assert done.state is JobState.succeeded, done.state_reason
    assert len({m.node for m in done.attempts[0].members}) == 2 and sorted(curve(client, job.id)) == list(range(24))
