"""`compute nodes | cordon | uncordon | inject-fault` and `up --health-config`, through click's CliRunner
against a real daemon."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from autoresearch.cli import _register, app
from compute.health import HealthConfig
from tests.compute.helpers import real_gpu_host, wait_until

_register()


@pytest.fixture
def cli_for():
    runner = CliRunner()

    def make(client):
        return lambda *args: runner.invoke(app, list(args), env={"AUTORESEARCH_HOME": str(client.home)})

    return make


def test_nodes_cordon_uncordon_and_a_fault_drill(start_compute, cli_for):
    client = start_compute(gpus=None, virtual_nodes=2, gpus_per_node=2, health=HealthConfig(recheck_backoff_s=60))
    cli = cli_for(client)
    wait_until(lambda: all(n.last_probe_at for n in client.nodes()), what="preflight probes")
    rows = json.loads(cli("compute", "nodes", "--json").stdout)
    typed = [n.model_dump(mode="json") for n in client.node_status()]  # the sqlite3 read = the typed one (a probe
    assert [r | {"last_probe_at": 0} for r in rows] == [t | {"last_probe_at": 0} for t in typed]  # may fall between)
    assert [(r["name"], r["state"], r["health"], r["gpus"], r["gpus_used"], r["gpus_free"], r["virtual"])
            for r in rows] == [("local-0", "active", "ok", [0, 1], 0, 2, True), ("local-1", "active", "ok", [2, 3], 0, 2, True)]
    if shutil.which("nvidia-smi") is None:  # never "healthy" where nothing could look
        assert [r["reason"] for r in rows] == ["gpu+cuda: skipped (no nvidia-smi)"] * 2

    assert cli("compute", "cordon", "local-0", "--reason", "fan swap").exit_code == 0
    table = cli("compute", "nodes").stdout  # the reason cell may wrap at this width; names never do
    assert "local-0" in table and "local-1" in table and "cordoned" in table
    assert json.loads(cli("compute", "nodes", "--json").stdout)[0]["reason"] == "cordoned: fan swap"
    back = cli("compute", "uncordon", "local-0", "--json")
    assert back.exit_code == 0 and json.loads(back.stdout)["state"] == "active"

    drill = cli("compute", "inject-fault", "local-1", "xid", "--json")
    assert drill.exit_code == 0 and json.loads(drill.stdout)["kind"] == "xid"
    wait_until(lambda: json.loads(cli("compute", "nodes", "--json").stdout)[1]["state"] == "quarantined",
               what="local-1 quarantined")
    refused = cli("compute", "uncordon", "local-1")
    assert refused.exit_code == 2 and "quarantined by its health checks" in refused.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["compute", "inject-fault", "local", "ecc"], "'local' is a real node"),
        (["compute", "inject-fault", "local", "fire"], "unknown fault kind 'fire': use one of thermal|ecc|xid|nccl|down|gang_nccl"),
        (["compute", "inject-fault", "gpu-9", "ecc"], "unknown node 'gpu-9'"),
        (["compute", "cordon", "gpu-9"], "known nodes are local"),
        (["compute", "uncordon", "gpu-9"], "unknown node 'gpu-9'"),
    ],
)
def test_bad_node_commands_exit_2_with_one_paragraph(start_compute, cli_for, args, message, tmp_path, monkeypatch):
    real_gpu_host(tmp_path / "bin", monkeypatch)  # node `local` has real GPUs: no fault drills there
    result = cli_for(start_compute())(*args)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split()) and "Traceback" not in result.output


def test_up_reads_a_health_config_and_names_bad_fields(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTORESEARCH_HOME", str(tmp_path / "home"))
    cli = CliRunner()
    bad = tmp_path / "health.yaml"
    bad.write_text("probe_interval_s: -5\n")
    result = cli.invoke(app, ["compute", "up", "--health-config", str(bad)])
    assert result.exit_code == 2 and "probe_interval_s" in result.stderr and str(bad) in " ".join(result.stderr.split())
    rules = tmp_path / "rules.yaml"
    rules.write_text("- name: flaky_fs\n  class: infra\n  pattern: 'Stale file handle'\n")
    bad.write_text("failure_rules: missing.yaml\n")
    result = cli.invoke(app, ["compute", "up", "--health-config", str(bad)])
    assert result.exit_code == 2 and "missing.yaml" in result.stderr
    bad.write_text("failure_rules: rules.yaml\n")
    result = cli.invoke(app, ["compute", "up", "--health-config", str(bad)])
    assert result.exit_code == 2 and "explanation" in result.stderr
