"""Datasets without a container: AR_DATA_<NAME> names the host path, a missing path is refused
at submit, and digests are content hashes up to a size limit, else size and mtime."""

from __future__ import annotations

import os

import pytest

from compute import ComputeError, JobSpec, JobState, dataset_digest
from tests.compute.helpers import log_text, wait_state


def test_a_plain_job_sees_each_dataset_as_its_host_path(compute_client, tmp_path):
    (tmp_path / "val").mkdir()
    job = compute_client.submit(JobSpec(argv=["sh", "-c", "echo train=$AR_DATA_TRAIN; echo val=$AR_DATA_VAL"],
                                        data={"train": str(tmp_path / "val"), "val": str(tmp_path / "val")}))
    wait_state(compute_client, job.id, JobState.succeeded)
    assert log_text(compute_client, job.id).split() == [f"train={tmp_path / 'val'}", f"val={tmp_path / 'val'}"]


def test_a_missing_dataset_is_refused_at_submit_naming_it(compute_client, tmp_path):
    with pytest.raises(ComputeError, match=r"dataset 'train' path .*/nope does not exist"):
        compute_client.submit(JobSpec(name="t", argv=["true"], data={"train": str(tmp_path / "nope")}))
    assert compute_client.list() == []


def test_digest_hashes_content_up_to_the_limit_then_uses_size_and_mtime(tmp_path):
    f = tmp_path / "a.bin"
    f.write_bytes(b"x" * 100)
    first = dataset_digest(str(f))
    assert first.startswith("sha256:") and dataset_digest(str(f)) == first
    f.write_bytes(b"y" * 100)
    assert dataset_digest(str(f)) != first  # same size, other content
    folder = tmp_path / "d"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "b").write_bytes(b"1234")
    assert dataset_digest(str(folder)).startswith("sha256:")
    os.utime(f, ns=(10**18, 10**18))
    assert dataset_digest(str(f), limit=10) == f"size+mtime:100:{10**18}"
    with pytest.raises(FileNotFoundError):
        dataset_digest(str(tmp_path / "gone"))
