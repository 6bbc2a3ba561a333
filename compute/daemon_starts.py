"""Starting attempts: one process (or container) for a single-node attempt, every member of a gang
(compute/gang_start.py) or none; an attempt that cannot start ends as exit 127 with the reason in its
log."""

from __future__ import annotations

from pathlib import Path

from compute.attempt_command import attempt_argv, attempt_env, container_run
from compute.attempt_logs import append_log
from compute.backends.base import AttemptExit, HostsGangs, LaunchError, LaunchRequest
from compute.daemon_ends import Ending
from compute.gang_start import gang_requests, preflight_port
from compute.gpus import detect_gpus
from compute.health import NodeTarget
from compute.health.rules import FLEET_NOT_STARTED_MARKER, NOT_STARTED_MARKER
from compute.health.gang_preflight import plan as plan_preflight
from compute.jobenv import secret_values
from compute.lifecycle import Started, job_event, live_attempts, record_handle, start_attempt
from compute.scheduler import Placement
from compute.spec import JobSpec


class Starting(Ending):
    """The daemon's launches of the attempts the scheduler placed."""

    def _start(self, placement: Placement) -> None:
        started = start_attempt(self.store, placement.job_id, placement.node, placement.gpus, placement.members,
                                placement.borrowed)
        if started is None:
            return
        if started.members:
            return self._start_gang(started)
        key = f"{started.job_id}.{started.number}"
        try:
            request = self._request(started, placement)
            self.masker.begin(key, secrets_of(started.spec), [str(started.log_path)])
            handle = self.backend.launch(request)
        except Exception as err:  # LaunchError, or anything else: the attempt did not start
            return self._not_started(started, key, err)
        self._tracked.add(key)
        record_handle(self.store, started.job_id, started.number, handle)

    def _request(self, started: Started, placement: Placement) -> LaunchRequest:
        """What the backend needs to start this single-node attempt (its checkpoint folder made);
        LaunchError when the daemon's environment lacks one of its secrets."""
        spec, gpus = started.spec, placement.gpus
        env, missing = attempt_env(spec, started.job_id, started.number, gpus, started.checkpoint_dir, placement.node)
        if missing is not None:
            raise LaunchError(
                f"the job's secret_env names {missing}, which the compute daemon's environment lacks; "
                f"set {missing} in the shell that starts the daemon (`autoresearch compute down`, then "
                "submit again from a shell that has it)"
            )
        cwd = spec.cwd or str(self.paths.home)
        Path(started.checkpoint_dir).mkdir(parents=True, exist_ok=True)
        run = container_run(spec, started.job_id, started.number, self.config.grace_s)
        argv = attempt_argv(spec, gpus, cwd, started.checkpoint_dir, env, name=run.name if run else "",
                            real_gpus=run is not None and self._real_gpus(placement.node, gpus))
        return LaunchRequest(
            key=f"{started.job_id}.{started.number}", argv=argv, env=env, cwd=cwd, node=placement.node, gpus=gpus,
            log_path=started.log_path, cpus=spec.resources.cpus, memory_gb=spec.resources.memory_gb,
            labels=dict(spec.labels), container=run,
        )

    def _start_gang(self, started: Started) -> None:
        """Launch every member of a gang attempt (compute/gang_start.py), or none; the members
        first run the gang preflight when the health config's `gang_preflight` says so."""
        spec, key = started.spec, f"{started.job_id}.{started.number}"
        cwd = spec.cwd or str(self.paths.home)
        Path(started.checkpoint_dir).mkdir(parents=True, exist_ok=True)
        config = self.config.health
        by_name = {n.name: n for n in self.nodes}
        targets = [NodeTarget.of(by_name[m.node]) if m.node in by_name else NodeTarget(name=m.node)
                   for m in started.members]
        preflight = plan_preflight(config.gang_preflight, targets, config.gang_preflight_timeout_s)
        try:
            if not isinstance(self.backend, HostsGangs):
                raise LaunchError(f"the {self.backend.name} backend cannot run multi-node jobs; submit with nodes=1")
            master = self.backend.master_address(started.members[0].node)
            port = preflight_port(self.backend, started.members[0].node, master[1]) if preflight.backend else 0
            health = self.health
            requests = gang_requests(started, cwd, master, preflight, port, config.gang_preflight_timeout_s,
                                     lambda node: health is not None and health.preflight_fault(node) is not None)
            self.masker.begin(key, secrets_of(spec), [str(r.log_path) for r in requests])
            handle = self.gangs.launch(requests)
        except Exception as err:  # the attempt did not start: none of its members runs
            return self._not_started(started, key, err)
        record_handle(self.store, started.job_id, started.number,
                      {**handle, "preflight": "pending"} if preflight.backend else handle)
        kind = "gang_preflight_started" if preflight.backend else "gang_preflight_skipped"
        job_event(self.store, kind, preflight.reason, started.job_id, started.number, started.members[0].node)

    def _not_started(self, started: Started, key: str, err: Exception) -> None:
        """The attempt (or none of its gang's members) could not start: say why in its log, end it as 127.
        The job's own request (a LaunchError) is the job's failure (rule `not_started`); the fleet's (a
        LaunchError with `infra`, or anything else the backend raised) an infra one (`fleet_not_started`)."""
        fleets = not isinstance(err, LaunchError) or err.infra
        marker = FLEET_NOT_STARTED_MARKER if fleets else NOT_STARTED_MARKER
        append_log(str(started.log_path), [f"{marker} {started.number}: {err}"])
        attempt = next(a for a in live_attempts(self.store) if a.key == key)
        self._finish(attempt, AttemptExit(127))

    def _real_gpus(self, node_name: str, gpus: tuple[int, ...]) -> bool:
        """Whether `gpus` on that node are devices a container runtime can pass (else virtual slots)."""
        node = next((n for n in self.nodes if n.name == node_name), None)
        if not gpus or node is None or node.virtual:
            return False
        if self._host_gpus is None:
            self._host_gpus = frozenset(detect_gpus())
        return set(gpus) <= self._host_gpus


def secrets_of(spec: JobSpec) -> list[str]:
    """The values of the spec's `secret_env` in the daemon's environment (none when one is missing:
    the launch then fails and says which)."""
    try:
        return list(secret_values(spec.secret_env).values())
    except KeyError:
        return []
