"""Nightly trials run borrowed only by default (morning work of any project reclaims their GPUs), in the
campaign's `compute.project`."""

from __future__ import annotations

import yaml

from autoresearch.campaign import load_campaign
from autoresearch.nightly import nightly_campaign
from tests.autoresearch.runner.conftest import synthetic_config


def test_nightly_trials_are_borrowed_only_unless_guaranteed_is_asked(tracking, tmp_path):
    data = synthetic_config(tracking, compute={"project": "vision", "gpus": 1})
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(data))
    campaign = load_campaign(path)
    assert (campaign.compute.project, campaign.compute.borrowed_only) == ("vision", False)
    night = nightly_campaign(campaign, "low").compute
    assert (night.project, night.borrowed_only, night.priority, night.preemptible) == ("vision", True, 25, True)
    assert nightly_campaign(campaign, "low", borrowed=False).compute.borrowed_only is False
