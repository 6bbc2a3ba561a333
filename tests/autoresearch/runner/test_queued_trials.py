"""A launched trial whose job still waits in the compute queue (every slot busy) is shown as queued,
with the job's waiting reason, not as running: in the runner's output and in `autoresearch status`
(issue 32 item 6)."""

from __future__ import annotations

import io
import json

from click.testing import CliRunner

from autoresearch.campaign import CampaignState
from autoresearch.cli import _register, app
from autoresearch.runner import PlainDisplay, run_campaign
from tests.autoresearch.runner.conftest import FAST, Background, campaign_of, synthetic_config, wait_until
from tests.compute.helpers import gate_job, wait_started

_register()


def test_trials_whose_jobs_wait_for_a_slot_show_as_queued_not_running(start_compute, tracking, tmp_path) -> None:
    client = start_compute(gpus=1)
    gate = tmp_path / "gate"
    blocker = client.submit(gate_job(gate, resources={"gpus": 1}))
    wait_started(client, blocker.id)
    data = synthetic_config(tracking, budget={"max_trials": 2, "max_parallel": 2}, compute={"gpus": 1})
    campaign = campaign_of(data)
    out = io.StringIO()
    runner = Background(lambda: run_campaign(campaign, home=client.home, display=PlainDisplay(out, every_s=0),
                                             settings=FAST))  # fmt: skip
    wait_until(lambda: "(0 running, 2 queued, 0 pending)" in out.getvalue(), what="the runner's line with 2 queued")
    assert "(2 running" not in out.getvalue()
    cli = CliRunner()
    env = {"AUTORESEARCH_HOME": str(client.home)}

    def reasons() -> list[str | None]:
        shown = cli.invoke(app, ["status", campaign.name, "--json"], env=env)
        assert shown.exit_code == 0, shown.output
        return [t["waiting_reason"] for t in json.loads(shown.stdout)["trials"]]

    # the daemon's pass gives each its reason (the slot is held by the blocker, or by the trial ahead)
    waiting = wait_until(lambda: (r := reasons()) and all(w and "scheduling pass" not in w for w in r) and r,
                         what="both trials' waiting reasons from the daemon")  # fmt: skip
    assert any("needs 1 GPU on one node" in w for w in waiting), waiting
    table = cli.invoke(app, ["status", campaign.name], env=env).stdout
    assert "queued" in table and "0 running, 2 queued" in table
    gate.touch()
    outcome = runner.join(timeout=180)
    assert outcome.state is CampaignState.completed, outcome.reason
    assert [t.waiting_reason for t in outcome.status.trials] == [None, None]
