"""The Agent Skills folder `autoresearch skills export-agent DIR` writes for coding agents.

`SKILL.md` (YAML front matter `name`, `description`, then concise instructions) and reference
files the agent opens when it needs them. Every command shown sits in a ```bash block, and
tests/autoresearch/cli/test_agent_bundle.py runs all of them, in file order, against a real
daemon: the blocks of one export form one script (`$JOB`, `$NAME` carry over).
"""

from __future__ import annotations

from pathlib import Path

SKILL = """\
---
name: autoresearch
description: Run and watch ML training jobs and research campaigns on a GPU fleet with the autoresearch CLI - submit jobs with idempotency keys, poll them as JSON, read why a job waits, its logs and metrics, start, steer and report on campaigns, and read autoresearch errors. Use when asked to train, sweep or tune models, or to check on jobs or campaigns.
---

# Driving autoresearch

The autoresearch CLI queues training jobs on a per-host compute daemon (GPU slots, priorities,
preemption) and runs research campaigns (a policy proposes trials, each trial is a job).
Everything below works from a shell; every reading command takes `--json`.

Rules that save you time:
- Parse `--json` output; never scrape tables.
- Give every submit an idempotency key (`--key`): repeating the call returns the same job, so a retry never doubles work.
- Check a submit with `--dry-run` first when unsure: it prints the resolved spec and submits nothing.
- Exit codes: 0 ok, 1 the job or campaign failed, 2 bad input (read stderr, fix the command), 124 a wait timed out.
- The job runs with your PATH and virtualenv; a bare `python` is the one your shell runs.

## Start the daemon (idempotent: exit 0 when it already runs)

```bash
autoresearch compute up
autoresearch compute status --json
```

## Submit, poll, read

```bash
autoresearch jobs submit --dry-run --key demo/run-1 --gpus 1 -- python train.py --lr 0.01
JOB=$(autoresearch jobs submit --key demo/run-1 --gpus 1 --name demo -- python train.py --lr 0.01)
autoresearch jobs status "$JOB" --json
autoresearch jobs wait "$JOB" --timeout 300 --json
autoresearch jobs logs "$JOB" --tail 20 --json
```

`jobs status --json` of a pending job has `waiting_reason` (why it has not started: "needs 4
GPUs on one node; the largest free block is 2 (local-1)", "node local-0 is cordoned", "behind 3
higher-priority job(s)", "held for job-ab12 (reservation)", "not before 12:03:10 (retry
backoff)"), `queue_position` and `estimated_start` (Unix time or null). More in
reference/jobs.md.

## Campaigns

A campaign runs until its budget ends: start it detached (`--detach` returns at once with the
campaign name, the runner's pid and its log file, and `--json` prints them as an object), then
poll `status --json` until `state` is no longer `running`:

```bash
autoresearch config check campaign.yaml --json
NAME=$(autoresearch config check campaign.yaml --json | python -c "import json, sys; print(json.load(sys.stdin)['name'])")
autoresearch run campaign.yaml --detach --json
until autoresearch status "$NAME" --json | python -c "import json, sys; sys.exit(json.load(sys.stdin)['state'] == 'running')"; do sleep 5; done
autoresearch status "$NAME" --sort value --json
```

Never run `autoresearch run` in the foreground from a tool call: it blocks until the campaign ends.

What the training script must print: its metrics as `key: value` lines on stdout or stderr, one
or more per line (`val_loss: 0.412`, `step: 100 | loss: 2.3`; JSON lines and Python dicts such as
Hugging Face Trainer's log work too), and at least once the key named by the campaign's
`objective.metric` (the last value counts). A `step: N` on a line numbers the values after it. A
trial whose log never has the objective fails as `no_metric`; prose lines are never read.

Steer a campaign (running or not) with chat slash commands on stdin; see reference/campaigns.md.

## Errors

Errors are one paragraph on stderr saying what was wrong, where, and what to do next; no
tracebacks. Skill calls print a JSON error object. See reference/errors.md.
"""

JOBS = """\
# Jobs in depth

Submit with resources, priority (0-100 or idle|low|normal|high|urgent), labels and a time limit;
`--dry-run` shows the spec as it would be queued (env by names only):

```bash
autoresearch jobs submit --dry-run --key demo/long --priority high --time-limit 600 --label sweep=demo -- python train.py
LONG=$(autoresearch jobs submit --key demo/long --priority low --time-limit 600 --label sweep=demo -- python train.py --steps 1000)
autoresearch jobs list --label sweep=demo --json
```

Why a job waits: read `waiting_reason`, `waiting_kind`, `queue_position` and `estimated_start`
from `jobs status --json` (also in `jobs list --json`):

```bash
autoresearch jobs status "$LONG" --json | python -c "import json, sys; j = json.load(sys.stdin); print(j['state'], j['waiting_reason'], j['queue_position'], j['estimated_start'])"
```

Change priority, cancel (a running job gets SIGTERM, then SIGKILL after its grace period):

```bash
autoresearch jobs priority "$LONG" normal --json
autoresearch jobs cancel "$LONG" --reason "not needed" --json
```

Logs and metrics through the typed skills (the same tools MCP serves; arguments as one JSON object):

```bash
autoresearch skills list
autoresearch skills call read_logs --json "{\\"job_id\\": \\"$JOB\\", \\"tail\\": 5}"
autoresearch skills call job_status --json "{\\"job_id\\": \\"$JOB\\"}"
```

Nodes: cordon one to stop new work going there (its jobs finish), uncordon it after a passing probe:

```bash
autoresearch compute nodes --json
```

MCP: `autoresearch mcp` serves the same skills over stdio to MCP clients.
"""

CAMPAIGNS = """\
# Campaigns

A campaign.yaml names the command (with `{param}` placeholders), the objective metric the job
prints as `key: value` lines, the search space, the budget and the policy (`config schema`
prints its JSON Schema). `config check` validates a file and prints it resolved:

```bash
autoresearch config check campaign.yaml
```

Watch and read results:

```bash
autoresearch status --json
autoresearch skills call list_trials --campaign "$NAME" --json '{"limit": 5}'
```

Steer with chat slash commands on stdin (`--no-llm`: slash commands only; `--wait 0`: do not
wait for a runner). `/status`, `/best`, `/trials` read; `/budget max_trials=N`, `/space
lr=1e-4..1e-2`, `/pause`, `/resume`, `/stop` change the campaign (applied by its runner, now or
on its next run):

```bash
printf '/status\\n/best\\n/budget max_trials=3\\n' | autoresearch chat "$NAME" --no-llm --wait 0
```

Then `resume NAME` continues it with the new budget (the same as `run` again).

Report: Markdown with plots, written to the campaign folder (or `--out DIR`):

```bash
autoresearch report "$NAME"
```
"""

ERRORS = """\
# Reading errors

Exit codes, the same for every command: 0 ok, 1 the job or campaign failed, 2 bad input,
124 a wait timed out. stderr holds one paragraph: what was wrong, where, what to do next.

```bash
autoresearch jobs status job-doesnotexist --json || echo "exit $?"
autoresearch jobs submit --gpus 999 -- true || echo "exit $?"
autoresearch jobs wait "$JOB" --timeout 0 --json || echo "exit $?"
```

A skill call prints a JSON error and exits 2 for what you must fix (`invalid_json`,
`invalid_arguments` with `field` naming the bad one, `unknown_skill`, `not_found`, `failed`)
or 1 when a service is down or a bug hit (`unavailable`, `internal`). Numbers must be JSON
numbers: `"5"` for an integer is refused, never coerced.

```bash
autoresearch skills call read_logs --json '{"job_id": "job-doesnotexist", "tail": "5"}' || echo "exit $?"
```
"""

FILES = {
    "SKILL.md": SKILL,
    "reference/jobs.md": JOBS,
    "reference/campaigns.md": CAMPAIGNS,
    "reference/errors.md": ERRORS,
}
"""Relative path -> text, in the order an agent (and the test) reads them."""


def write_bundle(folder: Path) -> list[Path]:
    """Write the bundle into `folder` (created if absent, files replaced); the paths written."""
    written = []
    for relative, text in FILES.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        written.append(path)
    return written
