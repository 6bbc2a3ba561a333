"""The gpu probe: one nvidia-smi query per node, parsed by a pure function.

Field names: drivers from R535 on call the clock reasons `clocks_event_reasons.*`; older
ones only know `clocks_throttle_reasons.*` and reject the new names with
`Field "clocks_event_reasons.hw_slowdown" is not a valid field to query.` The probe asks
with the new spelling first and, on that answer, once more with the old one, which it
then keeps. Values that a GPU does not have (`[N/A]`, `[Not Supported]`) are None; values
that say the GPU is in trouble (`[Unknown Error]`, `[GPU requires reset]`) are critical.
"""

from __future__ import annotations

import shutil
import time

from pydantic import BaseModel, ConfigDict, Field

from compute.health._proc import ProcResult, run_command, tail
from compute.health.report import Check, HealthReport, NodeTarget, skipped
from compute.records import HealthStatus

THROTTLE_REASONS = ("hw_slowdown", "hw_thermal_slowdown", "sw_thermal_slowdown", "hw_power_brake_slowdown")
"""Clock event (throttle) reasons the probe reads, without their prefix."""


def query_fields(prefix: str = "clocks_event_reasons") -> tuple[str, ...]:
    """The `--query-gpu` fields, in column order, with the clock-reason prefix of a driver."""
    return (
        "index",
        "uuid",
        "temperature.gpu",
        *(f"{prefix}.{r}" for r in THROTTLE_REASONS),
        "ecc.errors.uncorrected.volatile.total",
        "retired_pages.pending",
        "remapped_rows.pending",
        "remapped_rows.failure",
        "name",
        "driver_version",
    )


OLD_PREFIX = "clocks_throttle_reasons"
_ABSENT = {"n/a", "[n/a]", "not supported", "[not supported]", ""}
_FAULT_WORDS = ("error", "requires reset", "unknown", "lost")
_LOST_GPU_HINTS = (
    "couldn't communicate with the nvidia driver",
    "no devices were found",
    "unable to determine the device handle",
    "gpu is lost",
)


class GpuThresholds(BaseModel):
    """Limits the gpu probe compares nvidia-smi readings with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    temperature_degraded_c: float = 85.0
    """GPU core temperature (C) from which the GPU counts as degraded."""
    temperature_critical_c: float = 92.0
    """GPU core temperature (C) from which it is critical (near slowdown temperature)."""
    ecc_uncorrected_max: int = 0
    """Volatile uncorrected ECC errors allowed since the last driver reload."""
    throttle: dict[str, HealthStatus] = Field(
        default_factory=lambda: {
            "hw_slowdown": HealthStatus.critical,
            "hw_thermal_slowdown": HealthStatus.critical,
            "sw_thermal_slowdown": HealthStatus.degraded,
            "hw_power_brake_slowdown": HealthStatus.critical,
        }
    )
    """Status when a clock event reason is active; a reason left out is ignored."""


class GpuReading(BaseModel):
    """One GPU's row of the nvidia-smi query. None: the GPU does not report that value."""

    model_config = ConfigDict(frozen=True)

    index: int
    """nvidia-smi's GPU index."""
    uuid: str
    """GPU UUID (`GPU-...`)."""
    temperature_c: float | None
    """Core temperature in C."""
    throttle: dict[str, bool | None]
    """Clock event reason (hw_slowdown ...) -> active."""
    ecc_uncorrected: int | None
    """Volatile uncorrected ECC errors since the driver was loaded."""
    retired_pages_pending: bool | None
    """A page retirement waits for a GPU reset (pre-Ampere)."""
    remapped_rows_pending: bool | None
    """A row remapping waits for a GPU reset (Ampere and later)."""
    remapped_rows_failure: bool | None
    """A row remapping failed: the GPU should be replaced."""
    model: str = ""
    """The GPU model (`NVIDIA H100 80GB HBM3`); empty when not asked or not reported."""
    driver: str = ""
    """The driver version (`550.54.15`); empty when not asked or not reported."""
    errors: dict[str, str] = {}
    """Fields nvidia-smi answered with an error (`[Unknown Error]`, `[GPU requires reset]`)."""


class NvidiaSmiOutput(BaseModel):
    """Parsed output of one query: rows that parsed, and lines that did not."""

    model_config = ConfigDict(frozen=True)

    gpus: tuple[GpuReading, ...]
    """One reading per GPU row."""
    other_lines: tuple[str, ...] = ()
    """Lines that are not GPU rows (e.g. `Unable to determine the device handle for GPU...`)."""


def parse_nvidia_smi(text: str, fields: tuple[str, ...] | None = None) -> NvidiaSmiOutput:
    """Parse `--format=csv,noheader,nounits` output of a query for `fields` (default: new names)."""
    fields = fields or query_fields()
    gpus: list[GpuReading] = []
    other: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(fields) or not cells[0].isdigit():
            other.append(line.strip())
            continue
        gpus.append(_reading(dict(zip(fields, cells))))
    return NvidiaSmiOutput(gpus=tuple(gpus), other_lines=tuple(other))


def _reading(row: dict[str, str]) -> GpuReading:
    errors: dict[str, str] = {}

    def value(field: str) -> str | None:
        raw = row[field]
        if raw.lower() in _ABSENT:
            return None
        if raw.startswith("[") or any(w in raw.lower() for w in _FAULT_WORDS):
            errors[field] = raw
            return None
        return raw

    def flag(field: str) -> bool | None:
        raw = value(field)
        if raw is None:
            return None
        if raw.lower() in ("active", "yes"):
            return True
        if raw.lower() in ("not active", "no"):
            return False
        errors[field] = raw
        return None

    def number(field: str) -> float | None:
        raw = value(field)
        try:
            return None if raw is None else float(raw)
        except ValueError:
            errors[field] = raw or ""
            return None

    reason_fields = {f.rsplit(".", 1)[1]: f for f in row if f.startswith(("clocks_event_reasons.", OLD_PREFIX))}
    ecc = number("ecc.errors.uncorrected.volatile.total")
    return GpuReading(
        index=int(row["index"]),
        uuid=row["uuid"],
        temperature_c=number("temperature.gpu"),
        throttle={reason: flag(f) for reason, f in reason_fields.items()},
        ecc_uncorrected=None if ecc is None else int(ecc),
        retired_pages_pending=flag("retired_pages.pending"),
        remapped_rows_pending=flag("remapped_rows.pending"),
        remapped_rows_failure=flag("remapped_rows.failure"),
        model=_plain(row.get("name", "")),
        driver=_plain(row.get("driver_version", "")),
        errors=errors,
    )


def _plain(raw: str) -> str:
    """A text field as reported, empty for a value the GPU does not give."""
    return "" if raw.lower() in _ABSENT or raw.startswith("[") else raw


def hardware(output: NvidiaSmiOutput, node: NodeTarget) -> dict[str, str]:
    """The GPU model and driver of the node's first GPU (`gpu_model`, `driver`); empty when not reported."""
    gpu = next((g for g in output.gpus if g.index in node.gpus and g.model), None)
    return {} if gpu is None else {"gpu_model": gpu.model, "driver": gpu.driver}


def evaluate(output: NvidiaSmiOutput, node: NodeTarget, limits: GpuThresholds) -> list[Check]:
    """Checks for the node's GPUs: problems one by one, one summary check per healthy GPU."""
    checks = [
        Check(name="nvidia-smi", status=HealthStatus.critical, value=line, message=f"nvidia-smi says: {line}")
        for line in output.other_lines
    ]
    by_index = {g.index: g for g in output.gpus}
    for index in node.gpus:
        gpu = by_index.get(index)
        if gpu is None:
            checks.append(_missing(index, node))
            continue
        problems = _gpu_checks(gpu, limits)
        checks.extend(problems)
        if not problems:
            checks.append(
                Check(
                    name=f"gpu{index}",
                    status=HealthStatus.ok,
                    value=gpu.temperature_c,
                    threshold=limits.temperature_degraded_c,
                    message=f"{_temp(gpu)}, no throttling, no pending ECC retirements",
                )
            )
    return checks


def _temp(gpu: GpuReading) -> str:
    return "temperature not reported" if gpu.temperature_c is None else f"{gpu.temperature_c:g} C"


def _missing(index: int, node: NodeTarget) -> Check:
    if node.virtual:
        return Check(name=f"gpu{index}", status=HealthStatus.ok, skipped="no physical GPU behind this slot",
                     message="skipped: no physical GPU behind this slot")
    return Check(
        name=f"gpu{index}",
        status=HealthStatus.critical,
        message=f"GPU {index} is missing from nvidia-smi: it fell off the bus or the driver lost it",
    )


def _gpu_checks(gpu: GpuReading, limits: GpuThresholds) -> list[Check]:
    g = f"gpu{gpu.index}"
    out = [
        Check(name=f"{g}.{field}", status=HealthStatus.critical, value=raw, message=f"nvidia-smi reports {raw}")
        for field, raw in gpu.errors.items()
    ]
    t = gpu.temperature_c
    if t is not None and t >= limits.temperature_degraded_c:
        critical = t >= limits.temperature_critical_c
        out.append(
            Check(
                name=f"{g}.temperature",
                status=HealthStatus.critical if critical else HealthStatus.degraded,
                value=t,
                threshold=limits.temperature_critical_c if critical else limits.temperature_degraded_c,
                message=f"{t:g} C is at or above the {'critical' if critical else 'degraded'} limit",
            )
        )
    for reason, active in gpu.throttle.items():
        status = limits.throttle.get(reason)
        if active and status is not None and status is not HealthStatus.ok:
            out.append(
                Check(
                    name=f"{g}.{reason}",
                    status=status,
                    value=True,
                    threshold=False,
                    message=f"clocks are held down by {reason.replace('_', ' ')} ({_temp(gpu)})",
                )
            )
    if gpu.ecc_uncorrected is not None and gpu.ecc_uncorrected > limits.ecc_uncorrected_max:
        out.append(
            Check(
                name=f"{g}.ecc_uncorrected",
                status=HealthStatus.critical,
                value=gpu.ecc_uncorrected,
                threshold=limits.ecc_uncorrected_max,
                message=f"{gpu.ecc_uncorrected} volatile uncorrected ECC errors: memory is corrupt, reset the GPU",
            )
        )
    for name, flag, what in (
        ("retired_pages_pending", gpu.retired_pages_pending, "a page retirement waits for a GPU reset"),
        ("remapped_rows_pending", gpu.remapped_rows_pending, "a row remapping waits for a GPU reset"),
        ("remapped_rows_failure", gpu.remapped_rows_failure, "a row remapping failed: replace the GPU"),
    ):
        if flag:
            out.append(Check(name=f"{g}.{name}", status=HealthStatus.critical, value=True, threshold=False,
                             message=what))
    return out


class GpuProbe:
    """Reads temperature, clock reasons, ECC and pending retirements with one nvidia-smi call."""

    name = "gpu"

    def __init__(self, limits: GpuThresholds | None = None, nvidia_smi: str = "nvidia-smi",
                 timeout_s: float = 30.0):
        self.limits = limits or GpuThresholds()
        self.nvidia_smi = nvidia_smi
        self.timeout_s = timeout_s
        self._prefix = "clocks_event_reasons"

    def probe(self, node: NodeTarget) -> HealthReport:
        started = time.time()
        checks, seen = self._checks(node)
        return HealthReport.from_checks(node.name, self.name, checks, started, time.time() - started, seen)

    def _checks(self, node: NodeTarget) -> tuple[list[Check], dict[str, str]]:
        """The checks, and the GPU model and driver seen (`hardware`)."""
        if not node.gpus:
            return [skipped("node has no GPUs")], {}
        exe = shutil.which(self.nvidia_smi)
        if exe is None:
            return [skipped(f"no {self.nvidia_smi}", "not on PATH: no NVIDIA GPU or driver here")], {}
        result, fields = self._query(exe)
        if result.timed_out:
            return [Check(name="nvidia-smi", status=HealthStatus.critical, threshold=self.timeout_s,
                          message=f"nvidia-smi hung for {self.timeout_s:g} s: a GPU may have fallen off the bus")], {}
        if result.exit_code is None:
            return [Check(name="nvidia-smi", status=HealthStatus.degraded, message=result.start_error)], {}
        parsed = parse_nvidia_smi(result.output, fields)
        if result.exit_code != 0 and not parsed.gpus:
            text = tail(result.output, 500)
            lost = any(h in text.lower() for h in _LOST_GPU_HINTS)
            return [Check(name="nvidia-smi", status=HealthStatus.critical if lost else HealthStatus.degraded,
                          value=result.exit_code, threshold=0,
                          message=f"nvidia-smi failed (exit {result.exit_code}): {text}")], {}
        return evaluate(parsed, node, self.limits), hardware(parsed, node)

    def _query(self, exe: str) -> tuple[ProcResult, tuple[str, ...]]:
        fields = query_fields(self._prefix)
        result = run_command(self._argv(exe, fields), self.timeout_s)
        if result.exit_code not in (0, None) and "is not a valid field to query" in result.output:
            self._prefix = OLD_PREFIX if self._prefix != OLD_PREFIX else "clocks_event_reasons"
            fields = query_fields(self._prefix)
            result = run_command(self._argv(exe, fields), self.timeout_s)
        return result, fields

    @staticmethod
    def _argv(exe: str, fields: tuple[str, ...]) -> list[str]:
        return [exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"]
