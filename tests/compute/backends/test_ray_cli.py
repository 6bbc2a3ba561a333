"""`autoresearch compute up --backend ray [--address ...]`: bad input refused with exit 2, and a
daemon on the session Ray cluster through the CLI, with `jobs` commands against it."""

from __future__ import annotations

import json

import pytest

from compute import ComputeError, ComputePaths
from compute.backends import resolve_ray_address
from compute.control import daemon_pid


def daemon_pid_of(home):
    return daemon_pid(ComputePaths.of(home))


@pytest.mark.parametrize(("args", "message"), [
    (["--backend", "ray", "--address", "http://head:8265"], "--address 'http://head:8265' is not a Ray address"),
    (["--address", "auto"], "--address auto is for --backend ray"),
    (["--backend", "ray", "--virtual-nodes", "2"], "with --backend ray the nodes are the Ray cluster's"),
    (["--backend", "slurm"], "backend: Input should be 'local' or 'ray'"),
    (["--backend", "ray", "--storage", "shared/x"], "--storage 'shared/x': expected an absolute path every node"),
    (["--backend", "ray", "--storage", "s3://"], "--storage 's3://': expected SCHEME://LOCATION"),
    (["--storage", "/shared"], "--storage /shared is for --backend ray"),
])
def test_bad_backend_settings_exit_2_with_one_paragraph(cli, args, message):
    result = cli("compute", "up", *args)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output
    assert daemon_pid_of(cli.home) is None


def test_storage_shorthand_resolution(tmp_path):
    from compute.storage import Storage, resolve_storage

    assert [resolve_storage(v, tmp_path) for v in (None, "/shared/x", "file:///nfs/x", "s3://bucket/p")] == [
        Storage(str(tmp_path), shared=True), Storage("/shared/x", shared=True), Storage("file:///nfs/x", shared=False),
        Storage("s3://bucket/p", shared=False)]
    store = resolve_storage(f"file://{tmp_path}/store", tmp_path)
    (tmp_path / "cwd" / "sub").mkdir(parents=True)
    (tmp_path / "cwd" / "sub" / "a.txt").write_text("a")
    store.put_dir(str(tmp_path / "cwd"), "work/job-1")
    assert store.get_dir("work/job-1", str(tmp_path / "there")) and (tmp_path / "there/sub/a.txt").read_text() == "a"
    assert not store.get_dir("work/job-2", str(tmp_path / "none")) and not (tmp_path / "none").exists()
    with pytest.raises(ComputeError, match="storage nope://x: "):
        resolve_storage("nope://x", tmp_path).read_text("sentinel")


def test_address_shorthand_resolution():
    assert [resolve_ray_address(a) for a in (None, "", "local", "auto", "10.0.0.5:6379", "ray://head:10001")] == [
        "local", "local", "local", "auto", "10.0.0.5:6379", "ray://head:10001"]
    for bad in ("ray://head", "head:99999", "http://head:8265", "auto,local"):
        with pytest.raises(ComputeError, match="is not a Ray address; give one of"):
            resolve_ray_address(bad)


@pytest.mark.ray
def test_compute_up_on_a_ray_cluster_runs_jobs(cli, ray_cluster):
    result = cli("compute", "up", "--backend", "ray", "--address", ray_cluster.address, "--grace", "1", "--json")
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["backend"] == "ray" and [len(n["gpus"]) for n in info["nodes"]] == [2]
    assert info["nodes"][0]["address"] == ray_cluster.head_node.node_id
    submitted = cli("jobs", "submit", "--gpus", "2", "--", "sh", "-c", "echo on ray with $CUDA_VISIBLE_DEVICES")
    job_id = submitted.stdout.strip()
    assert cli("jobs", "wait", job_id, "--timeout", "90").exit_code == 0
    assert cli("jobs", "logs", job_id).stdout == "on ray with 0,1\n"
    status = json.loads(cli("compute", "status", "--json").stdout)
    assert status["daemon"]["backend"] == "ray" and status["nodes"][0]["name"] == info["nodes"][0]["name"]
    assert cli("compute", "down").exit_code == 0
