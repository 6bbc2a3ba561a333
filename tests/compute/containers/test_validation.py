"""Image names, runtimes, users and datasets are checked before anything runs (no runtime needed)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from click.testing import CliRunner

from autoresearch.cli import _register, app
from compute import JobSpec, validate_image
from compute.container import validate_user

_register()
cli = CliRunner()


@pytest.mark.parametrize("image", ["--privileged", "-v/:/host", "img name", "img\nx", "", "img\0"])
def test_an_image_that_could_be_read_as_an_option_or_is_not_a_name_is_refused(image):
    with pytest.raises(ValueError, match="is not an image reference"):
        validate_image(image)
    with pytest.raises(ValidationError, match="must not start with '-'"):
        JobSpec(argv=["true"], image=image)


def test_good_image_references_pass():
    for image in ["local/busybox", "ghcr.io/org/train:1.2", "img@sha256:" + "a" * 64, "localhost:5000/x_y-z"]:
        assert JobSpec(argv=["true"], image=image).image == image


def test_jobs_submit_refuses_an_option_as_image_and_a_bad_runtime(tmp_path):
    out = cli.invoke(app, ["jobs", "submit", "--image", "--privileged", "--", "true"])
    assert out.exit_code == 2 and "must not start with '-'" in out.output
    out = cli.invoke(app, ["jobs", "submit", "--image", "img", "--runtime", "lxc", "--", "true"])
    assert out.exit_code == 2 and "'docker' or 'podman'" in out.output
    out = cli.invoke(app, ["jobs", "submit", "--runtime", "podman", "--", "true"])
    assert out.exit_code == 2 and "--runtime needs --image" in out.output
    out = cli.invoke(app, ["jobs", "submit", "--data", "train", "--", "true"])
    assert out.exit_code == 2 and "is not NAME=PATH" in out.output


@pytest.mark.parametrize("user", ["-u", "--privileged", "1000:-1", "a b"])
def test_a_user_that_is_not_uid_gid_or_a_name_is_refused(user):
    with pytest.raises(ValueError, match="must not start with '-'"):
        validate_user(user)


def test_dataset_names_and_paths_are_checked():
    with pytest.raises(ValidationError, match="must start with a letter"):
        JobSpec(argv=["true"], data={"-x": "/d"})
    with pytest.raises(ValidationError, match="must be absolute"):
        JobSpec(argv=["true"], data={"train": "rel/path"})
    with pytest.raises(ValidationError, match="differ only in case"):
        JobSpec(argv=["true"], data={"train": "/a", "TRAIN": "/b"})
