"""Secrets a client holds never reach jobs through the daemon's environment."""

from __future__ import annotations

from compute import JobSpec, JobState
from compute.control import daemon_environment


def test_model_keys_are_dropped_and_the_list_is_configurable():
    env = {"OPENAI_API_KEY": "sk-1", "ANTHROPIC_API_KEY": "sk-ant-2", "WANDB_API_KEY": "w", "PATH": "/bin"}
    assert daemon_environment(env) == {"WANDB_API_KEY": "w", "PATH": "/bin"}
    custom = dict(env, AUTORESEARCH_PRIVATE_ENV="WANDB_API_KEY, MY_KEY", MY_KEY="k")
    kept = daemon_environment(custom)
    assert "WANDB_API_KEY" not in kept and "MY_KEY" not in kept
    assert "OPENAI_API_KEY" not in kept and "ANTHROPIC_API_KEY" not in kept  # the list extends the defaults


def test_a_job_of_an_autostarted_daemon_does_not_see_the_model_key(tmp_path, monkeypatch):
    from compute import Client

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-in-a-job")
    home = tmp_path / "home"
    client = Client(home)
    try:
        job = client.submit(JobSpec(name="env", argv=["sh", "-c", "env"], cwd=str(tmp_path)))
        [done] = client.wait([job.id], timeout=60)
        assert done.state == JobState.succeeded
        log = client.log_path(job.id).read_text()
        assert "AR_JOB_ID=" in log
        assert "sk-test-never-in-a-job" not in log
    finally:
        client.close()
        from compute import stop_daemon
        stop_daemon(home, stop_jobs=True)
