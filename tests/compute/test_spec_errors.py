"""Bad JobSpecs fail with the field path and what is allowed."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from compute import JobSpec


@pytest.mark.parametrize(
    "fields, expected",
    [
        ({"argv": "python train.py"}, "shell is false"),
        ({"argv": []}, "argv is empty"),
        ({"argv": ["x"], "priority": 101}, "priority"),
        ({"argv": ["x"], "priority": "hgih"}, "unknown priority 'hgih'"),
        ({"argv": ["x"], "resources": {"gpus": -1}}, "resources.gpus"),
        ({"argv": ["x"], "resources": {"gpu": 1}}, "resources.gpu"),
        ({"argv": ["x"], "cwd": "relative/dir"}, "must be an absolute path"),
        ({"argv": ["x"], "checkpoint_dir": "ckpt"}, "checkpoint_dir 'ckpt' must be an absolute path"),
        ({"argv": ["x"], "env": {"A=B": "1"}}, "contain no '='"),
        ({"argv": ["x"], "max_retries": -2}, "max_retries"),
        ({"argv": ["x"], "container_runtime": "lxc"}, "'docker' or 'podman'"),
        ({"argv": ["x"], "progress_timeout_s": 0}, "progress_timeout_s must be a positive number of seconds"),
        ({"argv": ["x"], "progress_timeout_s": -1.5}, "leave it unset for no hang detection"),
        ({"argv": ["x"], "progress_timeout_s": "60"}, "progress_timeout_s must be a positive number"),
        ({"argv": ["x"], "progress_timeout_s": True}, "progress_timeout_s must be a positive number"),
        ({"argv": ["x"], "resources": {"nodes": 0, "gpus": 1}}, "resources.nodes"),
        ({"argv": ["x"], "resources": {"nodes": 2}}, "resources.nodes=2 needs resources.gpus >= 1"),
        ({"argv": ["x"], "launcher": "mpirun"}, "launcher must be 'none' or 'torchrun', not 'mpirun'"),
    ],
)
def test_bad_spec_names_the_field_and_what_is_allowed(fields, expected):
    with pytest.raises(ValidationError) as info:
        JobSpec.model_validate(fields)
    assert expected in str(info.value)


def test_a_gang_spec_round_trips_through_json():
    spec = JobSpec.model_validate({"argv": ["x"], "resources": {"gpus": 2, "nodes": 3}, "launcher": "torchrun"})
    again = JobSpec.model_validate_json(spec.model_dump_json())
    assert (again.resources.nodes, again.resources.gpus, again.launcher.value) == (3, 2, "torchrun")
