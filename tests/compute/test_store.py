"""The store on its own (real SQLite, no daemon): requests, reads, events, idempotency."""

from __future__ import annotations

import re

import pytest

from compute import ComputeError, ComputePaths, JobNotFound, JobSpec, JobState, Store


@pytest.fixture
def store(tmp_path):
    s = Store(ComputePaths.of(tmp_path / "home"))
    yield s
    s.close()


def spec(**fields):
    return JobSpec(argv=["true"], cwd="/", **fields)


def test_submit_stores_a_pending_job_with_an_event(store):
    job = store.submit(spec(name="a", labels={"campaign": "c1"}, priority="high"))
    assert re.fullmatch(r"job-[0-9a-f]{10}", job.id)
    assert (job.state, job.priority, job.attempts) == (JobState.pending, 75, [])
    assert job.checkpoint_dir.endswith(f"compute/checkpoints/{job.id}")
    assert [(e.kind, e.job_id) for e in store.events()] == [("submitted", job.id)]
    assert store.get_job(job.id) == job


def test_same_idempotency_key_returns_the_existing_job(store):
    first = store.submit(spec(idempotency_key="campaign/trial-7"))
    again = store.submit(spec(idempotency_key="campaign/trial-7", name="other"))
    assert again.id == first.id and again.spec.name == "job"
    assert len(store.list_jobs()) == 1


def test_list_filters_and_orders_newest_first(store):
    a = store.submit(spec(labels={"campaign": "x", "kind": "trial"}, priority=10))
    b = store.submit(spec(labels={"campaign": "x"}, priority=60))
    c = store.submit(spec(labels={"campaign": "y"}, priority=90))
    assert [j.id for j in store.list_jobs()] == [c.id, b.id, a.id]
    assert [j.id for j in store.list_jobs(labels={"campaign": "x"})] == [b.id, a.id]
    assert [j.id for j in store.list_jobs(labels={"campaign": "x", "kind": "trial"})] == [a.id]
    assert [j.id for j in store.list_jobs(min_priority=50, max_priority=80)] == [b.id]
    assert [j.id for j in store.list_jobs(limit=1, offset=1)] == [b.id]
    store.request_cancel(a.id)
    assert [j.id for j in store.list_jobs(states=["cancelled"])] == [a.id]


def test_cancel_and_priority_changes_write_events(store):
    job = store.submit(spec())
    assert store.set_priority(job.id, "urgent").priority == 90
    cancelled = store.request_cancel(job.id, "superseded")
    assert cancelled.state == JobState.cancelled and cancelled.state_reason == "superseded"
    assert [e.kind for e in store.events(job_id=job.id)] == ["submitted", "priority_changed", "cancelled"]
    assert store.request_cancel(job.id).state == JobState.cancelled  # final: unchanged, no new event
    assert len(store.events(job_id=job.id)) == 3
    with pytest.raises(ComputeError, match="already cancelled"):
        store.set_priority(job.id, 10)


def test_bad_priority_and_unknown_ids_say_what_to_do(store):
    job = store.submit(spec())
    with pytest.raises(ComputeError, match=r"unknown priority 'hgih'.*high=75"):
        store.set_priority(job.id, "hgih")
    with pytest.raises(JobNotFound, match=r"no job 'job-0000000000'.*jobs list"):
        store.get_job("job-0000000000")
    with pytest.raises(JobNotFound):
        store.request_cancel("job-0000000000")


def test_two_connections_see_each_others_commits(tmp_path):
    paths = ComputePaths.of(tmp_path / "home")
    writer, reader = Store(paths), Store(paths)
    version = reader.data_version()
    job = writer.submit(spec())
    assert reader.data_version() != version
    assert reader.get_job(job.id).id == job.id
    writer.close()
    reader.close()


def test_a_store_made_before_gangs_gets_the_members_column_on_open(tmp_path):
    paths = ComputePaths.of(tmp_path / "home")
    old = Store(paths)
    with old.transaction() as conn:
        conn.execute("ALTER TABLE attempts DROP COLUMN members")
    job_id = old.insert_job(JobSpec(argv=["true"]))
    old.close()
    store = Store(paths)
    assert "members" in {r[1] for r in store.read("PRAGMA table_info(attempts)")}
    assert store.get_job(job_id).attempts == []
    store.close()
