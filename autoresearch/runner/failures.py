"""What a failed trial's record says: its first line names the error, the rest is evidence.

The first line of a failed trial's `log_excerpt` is what `status`, the runner's event line and
the fail-fast check (`autoresearch.campaign.repeated_failure`) read as "the error": the
exception of a traceback; `command not found: pythn` when the shell could not find argv[0] (exit
127 and the shell's own line naming it: not a line that embeds the job's wrapper script); or,
for a job that succeeded without the objective, which metric was missing and which names the
log did hold. The job's state and the log's last lines follow.
"""

from __future__ import annotations

import re

from compute import Job

TAIL_LINES = 20
"""Log lines kept in a failed trial's excerpt."""
_OURS = "[autoresearch]"
_NOT_FOUND = 127
"""The shell's exit status for a command it could not find."""


def error_line(text: str) -> str:
    """The line of a log excerpt that says what went wrong: its last line that is not one of the
    compute layer's own notes (a traceback ends with the exception); empty when there is none."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith(_OURS)]
    return lines[-1][:300] if lines else ""


def failed_excerpt(job: Job, tail: str) -> str:
    """The excerpt of a trial whose job failed: the error line, the job's reason, the log's end."""
    attempt = job.last_attempt
    excerpt = (attempt.log_excerpt if attempt else None) or tail
    first = _not_found(job, excerpt) or error_line(excerpt) or job.state_reason
    return "\n".join([first, f"job {job.id}: {job.state_reason}", excerpt]).strip()


def no_metric_excerpt(metric: str, seen: list[str], job: Job, tail: str) -> str:
    """The excerpt of a trial whose job succeeded but never reported `metric`: the names the log
    did hold, what to check, and the log's last lines."""
    names = ", ".join(seen[:30]) + (" ..." if len(seen) > 30 else "") if seen else "none"
    first = (
        f"the job succeeded but never reported {metric!r}; metrics seen in its log: {names}. Check "
        "objective.metric, or add a metrics.patterns regex with a group named after it for the line that holds it"
    )
    lines = [line for line in tail.rstrip().splitlines() if line.strip()][-TAIL_LINES:]
    return "\n".join([first, f"job {job.id}: {job.state_reason}", "last lines of the log:", *lines])


def _not_found(job: Job, excerpt: str) -> str | None:
    """`command not found: NAME` when the job's shell could not find its argv[0] (dash: `...: pythn:
    not found`, bash: `...: pythn: command not found`), else None."""
    attempt, program = job.last_attempt, job.spec.argv[0]
    if attempt is None or attempt.exit_code != _NOT_FOUND:
        return None
    said = re.compile(rf"(^|[\s:]){re.escape(program)}: (command )?not found\s*$")
    if any(said.search(line) for line in excerpt.splitlines() if not line.startswith(_OURS)):
        return f"command not found: {program}"
    return None
