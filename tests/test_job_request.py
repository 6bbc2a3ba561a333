"""The job request is declared once, in compute/spec.py: every `JobSpec` field can be set from the
campaign config, from the `submit_job` skill and from `jobs submit` (whose options are derived from
`JobRequest`), or is listed below as set by that caller itself (with why). A field added to `JobSpec` fails here until each caller reaches it.

The settings a caller chooses about how a job runs (`JobRequest`: resources and `JobOptions`) are
the same model in each; what differs (how the command, its folder and its environment are given)
is mapped here by name."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from autoresearch.campaign import Campaign, ComputeSettings
from autoresearch.runner.launch import campaign_job
from compute import Client, JobSpec, Resources
from compute.spec import JobRequest
from skills import SkillContext
from skills.builtin import builtin_registry
from skills.jobs import SubmitJobInput

SPEC_FIELDS = {name for name in JobSpec.model_fields if name != "resources"} | set(Resources.model_fields)
"""Every field of a job, its resources flat."""

CAMPAIGN: dict[str, str | None] = {
    "argv": "command",
    "cwd": "cwd",
    "env": "env",
    "secret_env": "secret_env",
    "data": "data",
    "name": None,  # the runner names each job `<campaign>/trial-N`
    "shell": None,  # `command` is a list rendered per trial, never run through a shell
    "labels": None,  # the runner labels each job with its campaign, trial and MLflow run
    "idempotency_key": None,  # the runner: one per trial, so a resumed campaign finds its jobs
    "checkpoint_dir": None,  # the runner: one per trial (a resumed trial gets its origin's)
    "avoid_nodes": None,  # the runner: a re-run of a suspect trial avoids the nodes it ran on
    "user": None,  # Client.submit fills in the submitting user
}
"""JobSpec field -> the `Campaign` key that sets it (outside `compute`), or None: set by the runner."""

SKILL: dict[str, str | None] = {
    "checkpoint_dir": None,  # a fresh folder per job; handing one over is the runner's (resume of a stopped trial)
    "avoid_nodes": None,  # the runner's, for re-running a suspect trial elsewhere
    "user": None,  # Client.submit fills in the submitting user
}
"""JobSpec fields `submit_job` does not take (the others are its input fields, by the same name)."""

CLI: dict[str, str | None] = {
    "argv": "command",  # jobs submit [OPTIONS] -- COMMAND...
    "name": "name",
    "labels": "label",
    "idempotency_key": "key",
    "data": "data",
    "secret_env": "secret_env",
    "env": None,  # the submitting shell's environment (compute.submitter.Submitter)
    "cwd": None,  # the submitting shell's folder
    "shell": None,  # COMMAND is an argv; `-- sh -c '...'` runs a shell line
    "checkpoint_dir": None,  # the runner's (a resumed trial), as for the skill
    "avoid_nodes": None,  # the runner's
    "user": None,  # Client.submit fills in the submitting user
}
"""JobSpec field -> the `jobs submit` parameter that sets it (a `JobRequest` field is its own), or None."""

VALUES: dict[str, Any] = {
    "gpus": 2, "nodes": 1, "cpus": 3.0, "memory_gb": 4.0, "launcher": "torchrun", "priority": 75,
    "preemptible": True, "project": "team-a", "borrowed_only": True, "max_retries": 2, "retry_backoff_s": 5.0,
    "time_limit_s": 600.0, "progress_timeout_s": 300.0, "grace_s": 7.0, "image": "local/busybox",
    "container_runtime": "podman",
}  # fmt: skip
"""A value for every `JobRequest` field (the default where no other value is valid with the rest)."""


def _reached(mapping: dict[str, str | None], settable: set[str]) -> list[str]:
    """The JobSpec fields a caller neither sets (same name, or through `mapping`) nor lists as its own."""
    stale = set(mapping) - SPEC_FIELDS
    assert not stale, f"listed but not JobSpec fields (remove them): {sorted(stale)}"
    return sorted(f for f in SPEC_FIELDS if f not in mapping and f not in settable
                  or mapping.get(f) is not None and mapping[f] not in settable)  # fmt: skip


def test_every_job_field_is_reachable_from_the_campaign_config() -> None:
    assert set(JobRequest.model_fields) <= set(ComputeSettings.model_fields)
    settable = set(ComputeSettings.model_fields) | set(Campaign.model_fields)
    assert _reached(CAMPAIGN, settable) == [], "set them in ComputeSettings, or list them in CAMPAIGN with why"


def test_every_job_field_is_reachable_from_the_submit_job_skill() -> None:
    assert set(JobRequest.model_fields) <= set(SubmitJobInput.model_fields)
    assert _reached(SKILL, set(SubmitJobInput.model_fields)) == [], "add them to SubmitJobInput, or list them in SKILL"


def test_every_job_field_is_reachable_from_jobs_submit() -> None:
    from autoresearch.cli import load

    params = {p.name for p in load("jobs submit").params if p.name is not None}
    assert set(JobRequest.model_fields) <= params
    assert _reached(CLI, params) == [], "add an option to jobs submit, or list the field in CLI"


def test_jobs_submit_passes_every_setting_to_its_job(compute_home: Path, tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from autoresearch.cli import app
    from autoresearch.cli.jobs_submit import flag

    flags = [f"--{'' if value else 'no-'}{flag(n)[2:]}" if isinstance(value, bool) else f"{flag(n)}={value}"
             for n, value in VALUES.items()]  # fmt: skip
    with Client(compute_home, autostart=False) as client:
        client.set_project("team-a", quota_gpus=1)
    out = CliRunner().invoke(app, ["jobs", "submit", "--dry-run", *flags, "--", "true"],
                             env={"AUTORESEARCH_HOME": str(compute_home)})
    assert out.exit_code == 0, out.output
    spec = JobSpec.model_validate_json(json.dumps({**json.loads(out.stdout)["spec"], "env": {}}))
    assert JobRequest.model_validate({**spec.resources.model_dump(), **spec.model_dump(include=set(VALUES))}) == (
        JobRequest.model_validate(VALUES))


def test_the_test_values_cover_every_setting_and_differ_from_the_defaults() -> None:
    assert set(VALUES) == set(JobRequest.model_fields)
    request, default = JobRequest.model_validate(VALUES), JobRequest()
    same = [f for f in VALUES if getattr(request, f) == getattr(default, f)]
    assert same == ["nodes", "preemptible"]  # borrowed_only needs preemptible; a container job runs on one node


def test_a_campaign_passes_every_compute_setting_to_its_jobs(tmp_path: Path) -> None:
    campaign = Campaign.model_validate(
        {"name": "c", "command": ["python", "t.py", "{x}"], "objective": {"metric": "m", "mode": "max"},
         "search_space": {"x": {"type": "float", "low": 0, "high": 1}}, "budget": {"max_trials": 1},
         "compute": VALUES}, context={"base_dir": tmp_path, "check_paths": False})  # fmt: skip
    spec = campaign_job(campaign, name="c/trial-0", argv=["python", "t.py"], env={}, cwd=str(tmp_path), labels={},
                        idempotency_key="k", checkpoint_dir=str(tmp_path / "ck"))  # fmt: skip
    assert JobRequest.model_validate({**spec.resources.model_dump(), **spec.model_dump(include=set(VALUES))}) == (
        JobRequest.model_validate(VALUES))


def test_the_submit_job_skill_passes_every_setting_to_its_job(ctx: SkillContext, tmp_path: Path) -> None:
    skills = builtin_registry()
    ctx.client.set_project("team-a", quota_gpus=1)
    out = skills.call("submit_job", {**VALUES, "argv": [sys.executable, "-c", "pass"], "cwd": str(tmp_path)}, ctx)
    spec = ctx.client.get(out.job.id).spec
    ctx.client.cancel(out.job.id)
    assert JobRequest.model_validate({**spec.resources.model_dump(), **spec.model_dump(include=set(VALUES))}) == (
        JobRequest.model_validate(VALUES))


@pytest.fixture
def ctx(compute_client: Any, tracking: Any) -> SkillContext:
    return SkillContext(home=compute_client.home, tracking=tracking, client_factory=lambda: compute_client)
