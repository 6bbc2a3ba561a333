"""`JobSpec.avoid_nodes` through the real daemon: a job runs elsewhere while another node can host
it, and on an avoided node only when no other could ever host it."""

from __future__ import annotations

from compute import JobSpec, JobState


def test_a_job_avoids_the_nodes_it_names_and_prints_the_node_it_ran_on(start_compute):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=1)
    spec = dict(argv=["sh", "-c", 'echo "ran on $AR_NODE"'], resources={"gpus": 1}, avoid_nodes=["local-0"])
    jobs = [client.submit(JobSpec(**spec)).id for _ in range(4)]
    done = client.wait(jobs, timeout=120)
    assert [j.state for j in done] == [JobState.succeeded] * 4
    assert {a.node for j in done for a in j.attempts} == {"local-1"}
    log = client.log_path(done[0].id).read_text()
    assert "ran on local-1" in log


def test_a_job_avoiding_every_node_that_fits_still_runs(start_compute):
    client = start_compute(gpus=None, virtual_nodes=1, gpus_per_node=1)
    job = client.submit(JobSpec(argv=["true"], resources={"gpus": 1}, avoid_nodes=["local-0"]))
    [done] = client.wait(job.id, timeout=120)
    assert done.state is JobState.succeeded and done.attempts[0].node == "local-0"
