"""Secrets a client holds never reach jobs through the daemon's environment."""

from __future__ import annotations

from compute import JobSpec, JobState
from compute.control import daemon_environment
from compute.log_secrets import mask


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


SECRETS = {
    "HF_TOKEN": "hf_leak-1", "AWS_SECRET_ACCESS_KEY": "aws-leak-2", "WANDB_API_KEY": "wandb-leak-3",
    "GITHUB_TOKEN": "ghp_leak-4", "AR_TEST_POLICY_KEY": "policy-leak-5", "OPENAI_API_KEY": "sk-leak-6",
}  # fmt: skip


def test_allowed_env_is_an_allowlist_that_operators_can_extend():
    from compute import allowed_env

    env = {**SECRETS, "PATH": "/bin", "LC_ALL": "C", "CUDA_HOME": "/cuda", "NCCL_DEBUG": "INFO",
           "VIRTUAL_ENV": "/venv", "MY_SETTING": "1", "MY_PREFIX_A": "2"}  # fmt: skip
    assert allowed_env(env) == {"PATH": "/bin", "LC_ALL": "C", "CUDA_HOME": "/cuda", "NCCL_DEBUG": "INFO",
                                "VIRTUAL_ENV": "/venv"}  # fmt: skip
    extended = allowed_env({**env, "AUTORESEARCH_JOB_ENV": "MY_SETTING, MY_PREFIX_*"})
    assert extended["MY_SETTING"] == "1" and extended["MY_PREFIX_A"] == "2" and "HF_TOKEN" not in extended


def test_jobs_get_no_credential_unless_their_spec_names_it(start_compute, tmp_path, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AUTORESEARCH_PRIVATE_ENV", "X")  # extends the defaults, does not replace them
    client = start_compute()
    plain = client.submit(JobSpec(name="env", argv=["env"], cwd=str(tmp_path)))
    named = client.submit(JobSpec(name="env", argv=["env"], cwd=str(tmp_path), secret_env=["HF_TOKEN"]))
    private = client.submit(JobSpec(name="env", argv=["env"], cwd=str(tmp_path), secret_env=["OPENAI_API_KEY"]))
    done = {job.id: job for job in client.wait([plain.id, named.id, private.id], timeout=60)}

    log = client.log_path(plain.id).read_text()
    assert done[plain.id].state == JobState.succeeded and "PATH=" in log and "AR_JOB_ID=" in log
    assert not [value for value in SECRETS.values() if value in log]
    log = client.log_path(named.id).read_text()
    assert f"HF_TOKEN={mask(len('hf_leak-1')).decode()}\n" in log and "wandb-leak-3" not in log  # got it, masked
    assert "hf_leak-1" not in client.get(named.id).spec.model_dump_json()  # only the name is stored
    assert done[private.id].state == JobState.failed  # the daemon never held the model key
    assert "secret_env names OPENAI_API_KEY, which the compute daemon's environment lacks" in (
        client.log_path(private.id).read_text()
    )


def test_a_container_gets_credentials_by_name_never_on_its_command_line(monkeypatch):
    from compute.attempt_command import attempt_argv, attempt_env

    monkeypatch.setenv("HF_TOKEN", "hf_leak-1")
    spec = JobSpec(argv=["python", "t.py"], image="img", env={"A": "1"}, secret_env=["HF_TOKEN"])
    env, missing = attempt_env(spec, "job-1", 1, (), "/w")
    argv = attempt_argv(spec, (), "/w", "/w", env)
    assert missing is None and env["HF_TOKEN"] == "hf_leak-1"  # the container's process gets the value ...
    assert argv[argv.index("HF_TOKEN") - 1] == "-e" and argv[argv.index("A") - 1] == "-e"
    assert not [item for item in argv if "hf_leak-1" in item or item == "A=1"]  # ... by name only
