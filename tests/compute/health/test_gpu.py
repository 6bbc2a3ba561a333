"""The gpu probe: parsing recorded nvidia-smi outputs, judging them, and running the query."""

from __future__ import annotations

import pytest

from compute.health import CommandProbe, CudaProbe, GpuProbe, GpuThresholds, NodeTarget, combine, evaluate, parse_nvidia_smi
from compute.health.gpu import OLD_PREFIX, query_fields
from compute.records import HealthStatus
from tests.compute.health.helpers import SMI, gpu_node


def judge(name: str, n: int = 8, limits: GpuThresholds | None = None, fields=None):
    parsed = parse_nvidia_smi((SMI / name).read_text(), fields)
    checks = evaluate(parsed, gpu_node(n), limits or GpuThresholds())
    return parsed, {c.name: c for c in checks}


def bad(checks) -> dict[str, HealthStatus]:
    return {name: c.status for name, c in checks.items() if c.status is not HealthStatus.ok}


def test_healthy_8_gpus_parse_into_one_ok_check_each():
    parsed, checks = judge("healthy_8x_h100.txt")
    assert [g.index for g in parsed.gpus] == list(range(8))
    assert parsed.gpus[3].temperature_c == 38
    assert parsed.gpus[0].throttle == dict.fromkeys(("hw_slowdown", "hw_thermal_slowdown", "sw_thermal_slowdown", "hw_power_brake_slowdown"), False)
    assert parsed.gpus[0].retired_pages_pending is None  # [N/A] on Hopper: row remapping instead
    assert parsed.gpus[0].remapped_rows_pending is False
    assert sorted(checks) == [f"gpu{i}" for i in range(8)]
    assert bad(checks) == {}


def test_thermal_throttling_is_critical_and_sw_thermal_degraded():
    _, checks = judge("thermal_throttle_8x_h100.txt")
    assert bad(checks) == {
        "gpu5.temperature": HealthStatus.critical,
        "gpu5.hw_slowdown": HealthStatus.critical,
        "gpu5.hw_thermal_slowdown": HealthStatus.critical,
        "gpu2.temperature": HealthStatus.degraded,
        "gpu2.sw_thermal_slowdown": HealthStatus.degraded,
    }
    assert checks["gpu5.temperature"].value == 94 and checks["gpu5.temperature"].threshold == 92


def test_thresholds_are_configurable():
    limits = GpuThresholds(temperature_degraded_c=95, temperature_critical_c=99,
                           throttle={"hw_thermal_slowdown": HealthStatus.degraded})
    _, checks = judge("thermal_throttle_8x_h100.txt", limits=limits)
    assert bad(checks) == {"gpu5.hw_thermal_slowdown": HealthStatus.degraded}


def test_uncorrected_ecc_errors_are_critical():
    _, checks = judge("ecc_uncorrected_8x_a100.txt")
    assert bad(checks) == {"gpu3.ecc_uncorrected": HealthStatus.critical}
    assert checks["gpu3.ecc_uncorrected"].value == 4
    _, lenient = judge("ecc_uncorrected_8x_a100.txt", limits=GpuThresholds(ecc_uncorrected_max=4))
    assert bad(lenient) == {}


def test_pending_remapped_rows_and_failed_remapping_are_critical():
    _, checks = judge("pending_remapped_rows_8x_a100.txt")
    assert bad(checks) == {"gpu6.remapped_rows_pending": HealthStatus.critical,
                           "gpu7.remapped_rows_failure": HealthStatus.critical}


def test_pending_retired_pages_on_v100_is_critical():
    parsed, checks = judge("pending_retired_pages_4x_v100.txt", n=4)
    assert parsed.gpus[0].throttle["hw_power_brake_slowdown"] is None  # [Not Supported]
    assert bad(checks) == {"gpu1.retired_pages_pending": HealthStatus.critical}


def test_na_and_not_supported_fields_are_absent_not_errors():
    parsed, checks = judge("na_fields_2x_rtx4090.txt", n=2)
    g = parsed.gpus[1]
    assert (g.ecc_uncorrected, g.retired_pages_pending, g.remapped_rows_pending, g.errors) == (None, None, None, {})
    assert bad(checks) == {}


def test_old_driver_output_with_throttle_spelling_parses():
    fields = query_fields(OLD_PREFIX)
    assert "clocks_throttle_reasons.hw_thermal_slowdown" in fields
    parsed, checks = judge("old_driver_470_4x_v100.txt", n=4, fields=fields)
    assert parsed.gpus[2].throttle["hw_thermal_slowdown"] is False
    assert parsed.gpus[2].retired_pages_pending is False
    assert bad(checks) == {}


def test_lost_gpu_and_error_values_are_critical():
    parsed, checks = judge("gpu_lost_8x_h100.txt")
    assert [g.index for g in parsed.gpus] == [0, 1, 2, 3, 5, 6, 7]
    assert parsed.other_lines == ("Unable to determine the device handle for GPU 0000:9B:00.0: Unknown Error",)
    problems = bad(checks)
    assert problems["gpu4"] is HealthStatus.critical  # missing from the rows
    assert problems["nvidia-smi"] is HealthStatus.critical
    assert problems["gpu2.temperature.gpu"] is HealthStatus.critical
    assert checks["gpu2.ecc.errors.uncorrected.volatile.total"].value == "[GPU requires reset]"


def test_a_virtual_node_slot_without_physical_gpu_is_not_critical():
    parsed = parse_nvidia_smi((SMI / "na_fields_2x_rtx4090.txt").read_text())
    node = NodeTarget(name="v3", gpus=(2, 3), virtual=True)
    checks = evaluate(parsed, node, GpuThresholds())
    assert {c.name: c.status for c in checks} == {"gpu2": HealthStatus.ok, "gpu3": HealthStatus.ok}
    assert all("skipped" in c.message for c in checks)


def test_probe_runs_one_query_and_reports_only_the_nodes_gpus(fake_smi):
    fake_smi.use("thermal_throttle_8x_h100.txt")
    node = NodeTarget(name="slice-1", gpus=(4, 5), virtual=True)
    report = GpuProbe(nvidia_smi=fake_smi.path).probe(node)
    assert report.status is HealthStatus.critical
    assert {c.name for c in report.checks} == {"gpu4", "gpu5.temperature", "gpu5.hw_slowdown",
                                               "gpu5.hw_thermal_slowdown"}
    assert "gpu5.hw_thermal_slowdown" in report.reason
    (call,) = fake_smi.calls()
    assert call == f"--query-gpu={','.join(query_fields())} --format=csv,noheader,nounits"


def test_probe_falls_back_to_old_field_names_once_and_keeps_them(fake_smi):
    fake_smi.use("old_driver_470_4x_v100.txt",
                 FAKE_SMI_REJECT_EVENT=str(SMI / "old_driver_470_rejects_event_fields.txt"))
    probe = GpuProbe(nvidia_smi=fake_smi.path)
    first = probe.probe(gpu_node(4))
    second = probe.probe(gpu_node(4))
    assert first.status is second.status is HealthStatus.ok
    calls = fake_smi.calls()
    assert len(calls) == 3  # new spelling (rejected), old spelling, then old spelling directly
    assert "clocks_event_reasons" in calls[0] and all(OLD_PREFIX in c for c in calls[1:])


def test_driver_not_loaded_is_critical(fake_smi):
    fake_smi.use("no_driver.txt", FAKE_SMI_EXIT="9")
    report = GpuProbe(nvidia_smi=fake_smi.path).probe(gpu_node(2))
    assert report.status is HealthStatus.critical
    assert "couldn't communicate with the NVIDIA driver" in report.checks[0].message


def test_hung_nvidia_smi_is_critical_after_the_timeout(fake_smi):
    fake_smi.use("healthy_8x_h100.txt", FAKE_SMI_SLEEP="30")
    report = GpuProbe(nvidia_smi=fake_smi.path, timeout_s=0.5).probe(gpu_node(2))
    assert report.status is HealthStatus.critical
    assert "hung" in report.checks[0].message


@pytest.mark.parametrize("node", [gpu_node(0), gpu_node(2)])
def test_skipped_cleanly_without_gpus_or_nvidia_smi(node):
    report = GpuProbe(nvidia_smi="nvidia-smi-not-installed-here").probe(node)
    assert report.status is HealthStatus.ok
    (check,) = report.checks
    assert check.name == "skipped" and check.message.startswith("skipped: ")


def test_a_host_without_nvidia_smi_says_its_probes_were_skipped_not_that_it_is_healthy(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    node = gpu_node(4, virtual=True)
    nothing_ran = combine(node.name, [GpuProbe().probe(node), CudaProbe().probe(node)], 0.0, 0.0)
    assert nothing_ran.status is HealthStatus.ok
    assert [c.skipped for c in nothing_ran.checks] == ["no nvidia-smi", "no nvidia-smi"]
    assert nothing_ran.reason == "gpu+cuda: skipped (no nvidia-smi)"
    one_ran = combine(node.name, [CommandProbe(["/bin/true"]).probe(node), GpuProbe().probe(node)], 0.0, 0.0)
    assert one_ran.reason == "command+gpu: healthy; gpu skipped (no nvidia-smi)"


def test_probe_reports_the_gpu_model_and_driver_it_saw(fake_smi):
    fake_smi.use("old_driver_470_4x_v100.txt")
    report = GpuProbe(nvidia_smi=fake_smi.path).probe(gpu_node(2))
    assert report.hardware == {"gpu_model": "Tesla V100-SXM2-32GB", "driver": "470.223.02"}
    assert combine("n", [report], ts=0, duration_s=0).hardware == report.hardware  # what the daemon stores
