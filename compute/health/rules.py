"""The built-in failure rules: data, in the order they are tried (first match wins).

Order matters. Lines the daemon appends when it stops an attempt (hung, its node
quarantined, its gang preflight failed) come first: they say why it ended. Then hardware evidence (Xid, ECC, a lost
GPU): it explains everything after it. Out-of-memory comes before NCCL, because one rank running out of
memory shows up as NCCL timeouts on all the others. Python tracebacks come late:
NCCL and CUDA errors are raised as Python exceptions too. Rules that look only at the
signal come last, so a log line can explain a death by signal.
"""

from __future__ import annotations

import re

from compute.health.faults import MONITOR_KILL_MARKER
from compute.health.gang_preflight import FAILED_MARKER as GANG_PREFLIGHT_MARKER
from compute.records import FailureClass

infra, user, resource = FailureClass.infra, FailureClass.user, FailureClass.resource

DISK_FULL = (r"No space left on device|\[Errno 28\]|\bENOSPC\b|database or disk is full"
             r"|Disk quota exceeded|\[Errno 122\]")
"""How a full disk (or quota) reads in a log: the `disk_full` rule's pattern. Readers after the
classifier read its verdict (`Attempt.failure_rule == DISK_FULL_RULE`), never this text again."""
DISK_FULL_RULE = "disk_full"
"""The name of the rule that classifies a full disk (or quota): what an attempt's `failure_rule` says."""

HANG_MARKER = "[autoresearch] stopped as hung"
"""The line the daemon appends to the log of an attempt it stops for having written nothing for
its job's `progress_timeout_s`: the `hang` rule's evidence."""

NODE_UNFIT_MARKER = "[autoresearch] this node cannot run the job:"
"""The line a node's agent (or the daemon on its behalf) writes when what the job needs is missing
on that node but present on the daemon's host (its working directory, its program, the storage):
the `node_unfit` rule's evidence."""

NOT_STARTED_MARKER = "[autoresearch] could not start attempt"
"""The line the daemon writes, followed by the attempt's number and the reason, when the job's own
request kept its attempt from starting (its working directory gone, a secret the daemon lacks ...):
the `not_started` rule's evidence."""

FLEET_NOT_STARTED_MARKER = "[autoresearch] the fleet could not start attempt"
"""The same line when the fleet kept the attempt from starting (a node that left before its gang
started, a storage the daemon cannot write ...; `LaunchError(infra=True)`): the `fleet_not_started` rule's."""

DEFAULT_RULES: list[dict] = [
    dict(name="node_unfit", failure_class=infra, pattern=re.escape(NODE_UNFIT_MARKER),
         explanation="the node lacks what the job needs and the daemon's host has (its working directory, its "
                     "program, the storage): requeued on another node; mount the shared path there or give the "
                     "daemon --storage (docs/ray.md)"),
    dict(name="fleet_not_started", failure_class=infra, pattern=re.escape(FLEET_NOT_STARTED_MARKER),
         explanation="the attempt could not start for a reason of the fleet, not of the job (its log's last line "
                     "says which: a node that left before its gang started, a storage the daemon cannot write): "
                     "requeued on another node, no retry of the job spent"),
    dict(name="not_started", failure_class=user, pattern=re.escape(NOT_STARTED_MARKER),
         explanation="the attempt could not start, for a reason of the job's own (its log's last line says which: "
                     "a working directory that no longer exists, a secret_env the daemon's environment lacks, no "
                     "torchrun for launcher torchrun): fix it and submit again"),
    dict(name="hang", failure_class=infra, pattern=re.escape(HANG_MARKER),
         explanation="its log did not grow for progress_timeout_s: a hung rank, collective or I/O; "
                     "stopped and requeued on another node (raise progress_timeout_s if the job is "
                     "silent for long on purpose)"),
    dict(name="health_monitor_kill", failure_class=infra, pattern=re.escape(MONITOR_KILL_MARKER),
         explanation="the health monitor stopped it because its node was quarantined or faulty"),
    dict(name="gang_preflight", failure_class=infra, pattern=re.escape(GANG_PREFLIGHT_MARKER),
         explanation="the cross-node all-reduce before the gang's argv failed on this member's node (a rank "
                     "that never joined, an NCCL error, a wrong sum or a hang): requeued without that node"),
    dict(name="xid", failure_class=infra, pattern=r"\bNVRM: Xid\b|\bXid \(PCI:|\bXid\b.*\b\d+\b.*GPU",
         explanation="the NVIDIA driver reported an Xid: a GPU hardware or driver fault"),
    dict(name="ecc", failure_class=infra,
         pattern=r"(?i)uncorrectable ECC error|ECC error.*uncorrect|double bit ECC|DBE \(double bit error\)",
         explanation="uncorrectable GPU memory (ECC) error: the GPU needs a reset or replacement"),
    dict(name="gpu_lost", failure_class=infra,
         pattern=r"(?i)fallen off the bus|GPU is lost|Unable to determine the device handle",
         explanation="a GPU dropped off the PCIe bus"),
    dict(name="cuda_oom", failure_class=resource,
         pattern=r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|CUBLAS_STATUS_ALLOC_FAILED"
                 r"|cudaErrorMemoryAllocation|RESOURCE_EXHAUSTED: Out of memory",
         explanation="GPU memory ran out: use a smaller batch/model, or ask for more or bigger GPUs"),
    dict(name="host_oom_kill", failure_class=resource, signals=[9],
         pattern=r"(?i)out of memory: killed process|invoked oom-killer|oom-kill|oom_reaper"
                 r"|memory cgroup out of memory|\bOOMKilled\b",
         explanation="the kernel OOM killer ended it: host memory ran out, ask for more memory_gb"),
    dict(name="host_memory_error", failure_class=resource, pattern=r"^\s*MemoryError\b",
         explanation="Python could not allocate host memory"),
    dict(name=DISK_FULL_RULE, failure_class=resource, pattern=DISK_FULL,
         explanation="the disk is full: free space or write checkpoints elsewhere"),
    dict(name="nccl_timeout", failure_class=infra,
         pattern=r"Watchdog caught collective operation timeout|ProcessGroupNCCL.*[Tt]imed? ?out"
                 r"|NCCL.*\b[Tt]imeout\b|collective operation timeout",
         explanation="an NCCL collective timed out: a peer rank, GPU or link hung"),
    dict(name="nccl_invalid_usage", failure_class=user, pattern=r"ncclInvalidUsage|NCCL error.*invalid usage",
         explanation="NCCL was called wrongly (mismatched collectives or ranks): a bug in the job"),
    dict(name="nccl_error", failure_class=infra,
         pattern=r"NCCL error|ncclSystemError|ncclInternalError|ncclUnhandledCudaError|ncclRemoteError"
                 r"|NCCL communicator was aborted|NCCL WARN .*(?:[Ee]rror|[Ff]ailed)",
         explanation="NCCL failed (network, NVLink or a peer process): an infrastructure fault"),
    dict(name="cuda_driver", failure_class=infra,
         pattern=r"CUDA error: (?:an illegal memory access|unspecified launch failure|launch failure"
                 r"|the launch timed out|initialization error|unknown error|system not yet initialized)"
                 r"|CUDA driver version is insufficient|no CUDA-capable device is detected"
                 r"|No CUDA GPUs are available|CUDA-capable device\(s\) is/are busy or unavailable"
                 r"|cudaErrorLaunchFailure|CUBLAS_STATUS_EXECUTION_FAILED|CUDNN_STATUS_EXECUTION_FAILED",
         explanation="a CUDA launch or driver failure, usually a faulty GPU or driver "
                     "(an illegal memory access that repeats on healthy nodes is a kernel bug)"),
    dict(name="node_lost", failure_class=infra,
         pattern=r"(?i)\bnode lost\b|NodeDiedError|has been marked dead|RayletDied|node .* went down",
         explanation="the node (or its agent) died under the job"),
    dict(name="device_side_assert", failure_class=user,
         pattern=r"device-side assert triggered|Assertion `.*` failed",
         explanation="a CUDA kernel assertion failed, usually an index out of range (labels >= num_classes)"),
    dict(name="nan_guard", failure_class=user,
         pattern=r"(?i)\b(?:nan|non-finite|not finite|inf)\b.*\b(?:loss|grad\w*|detected|guard)\b"
                 r"|\b(?:loss|grad\w*)\b\W+(?:is\W+|=\W*)?(?:nan|inf)\b|FloatingPointError",
         explanation="training diverged (NaN/inf loss) and the job's NaN guard stopped it: "
                     "lower the learning rate or fix the numerics"),
    # Container runtimes: the host's set-up, never the job's code (before command_not_found).
    dict(name="container_runtime_missing", failure_class=infra, exit_codes=[127],
         pattern=r"\b(docker|podman): (command )?not found|exec: \"?(docker|podman)\"?: executable file not found",
         explanation="the container runtime is not installed on this host: install it (apt-get install docker.io, "
                     "or podman), or submit with the other --runtime"),
    dict(name="container_daemon_down", failure_class=infra,
         pattern=r"Cannot connect to the Docker daemon|Is the docker daemon running|Cannot connect to Podman",
         explanation="the container runtime's daemon is not running: start it (systemctl start docker, or "
                     "dockerd &) and the job is retried"),
    dict(name="container_image_missing", failure_class=infra,
         pattern=r"Unable to find image|pull access denied|repository does not exist|image not known|"
                 r"manifest unknown|Error: initializing source|short-name .* did not resolve",
         explanation="the job's image is not on this host and cannot be pulled: pull or import it "
                     "(docker pull IMAGE, podman pull IMAGE, or docker import), or fix the image name"),
    dict(name="bad_arguments", failure_class=user, exit_codes=[2], pattern=r"^\S+: error: |^usage: ",
         explanation="the command was called with bad arguments (argparse usage error)"),
    dict(name="command_not_found", failure_class=user, exit_codes=[127],
         explanation="the command was not found: check argv[0] and PATH"),
    dict(name="not_executable", failure_class=user, exit_codes=[126],
         explanation="the command is not executable: check its permissions"),
    dict(name="segfault", failure_class=user, signals=[11],
         explanation="it crashed in native code (segfault): a bug in an extension or library"),
    dict(name="segfault_message", failure_class=user, pattern=r"Segmentation fault|Fatal Python error: Segmentation",
         explanation="it crashed in native code (segfault): a bug in an extension or library"),
    dict(name="python_traceback", failure_class=user,
         pattern=r"^Traceback \(most recent call last\)|^(?:[A-Za-z_][\w]*\.)*[A-Za-z_]\w*(?:Error|Exception)\b(?::|$)",
         explanation="a Python exception in the job's code"),
    dict(name="native_abort", failure_class=user, signals=[6],
         explanation="it aborted (SIGABRT), e.g. an uncaught C++ exception"),
    dict(name="sigkill", failure_class=resource, signals=[9],
         explanation="killed by SIGKILL, not by the daemon: most often the kernel OOM killer (see dmesg)"),
]
"""Built-in rules as plain dicts (the same shape a config file uses)."""
