"""The end-of-campaign checks on hand-made snapshots."""

from __future__ import annotations

from evals import CampaignSnapshot, JobEnd, TrialEnd, check_end


def good() -> CampaignSnapshot:
    return CampaignSnapshot(
        state="completed", max_trials=3, reported_best=1,
        trials=[TrialEnd(number=0, state="complete", value=2.0, job_id="job-a"),
                TrialEnd(number=1, state="complete", value=1.0, job_id="job-b"),
                TrialEnd(number=2, state="failed", job_id="job-c")],
        jobs=[JobEnd(job_id="job-a", trial=0, state="succeeded", last_value=2.0),
              JobEnd(job_id="job-b", trial=1, state="succeeded", last_value=1.0),
              JobEnd(job_id="job-c", trial=2, state="failed")],
    )  # fmt: skip


def changed(**update) -> CampaignSnapshot:
    return good().model_copy(update=update)


def test_a_correct_end_has_no_problems():
    assert check_end(good()) == []


def test_a_trial_left_running_and_an_unfinished_campaign():
    trials = [*good().trials[:2], TrialEnd(number=2, state="running", job_id="job-c")]
    problems = check_end(changed(state="running", trials=trials))
    assert problems == ["campaign state is running, not completed", "trials still proposed/running: [2]"]


def test_a_succeeded_job_whose_trial_failed_is_a_lost_result():
    trials = [*good().trials[:2], TrialEnd(number=2, state="failed", job_id="job-c")]
    jobs = [*good().jobs[:2], JobEnd(job_id="job-c", trial=2, state="succeeded", last_value=0.5)]
    assert check_end(changed(trials=trials, jobs=jobs)) == [
        "job job-c succeeded but trial 2 is failed: a lost result"
    ]


def test_a_value_that_differs_from_the_job_log():
    jobs = [JobEnd(job_id="job-a", trial=0, state="succeeded", last_value=2.5), *good().jobs[1:]]
    assert check_end(changed(jobs=jobs)) == ["trial 0 value 2.0 != its job's last value 2.5"]


def test_a_job_no_trial_owns_and_two_trials_sharing_a_job():
    jobs = [*good().jobs, JobEnd(job_id="job-d", trial=1, state="succeeded", last_value=1.0)]
    assert check_end(changed(jobs=jobs)) == ["job job-d (trial label 1) belongs to no trial: a duplicate launch"]
    trials = [*good().trials[:2], TrialEnd(number=2, state="failed", job_id="job-b")]
    assert "two trials share a job" in check_end(changed(trials=trials))


def test_a_wrong_reported_best_and_a_budget_overrun():
    assert check_end(changed(reported_best=0)) == [
        "reported best is trial 0, but the best complete trial is 1"
    ]
    extra = [TrialEnd(number=n, state="failed") for n in range(3, 5)]
    assert check_end(changed(trials=[*good().trials, *extra])) == [
        "5 trials counted against a budget of 3 (more than one slot over)"
    ]
    one_over = [TrialEnd(number=3, state="failed")]
    assert check_end(changed(trials=[*good().trials, one_over[0]])) == []


def test_max_mode_picks_the_largest_value_as_best():
    assert check_end(changed(mode="max", reported_best=0)) == []
