"""The tracking layer: MLflow binding, log-metric parsing and the one log -> run sync, metric
sources, tag names, LLM usage logging, and the one tracking-URI resolver.

Layers: compute <- tracking <- skills <- autoresearch. Everything here works on a `Tracker`:
`MlflowTracker` (any MLflow store), `InMemoryTracker` (tests, throwaway runs) and
`QueuedTracker` (writes queued in a durable `Outbox`, applied on a background thread). `tracking.testing.tracker_suite` is the
conformance suite every implementation passes. Nothing here knows campaigns. Names are imported on first use (PEP 562):
`from tracking.outbox_reads import pending_writes` or `tracking.TrackingConfig` loads that module only.
"""

import typing as _typing

from compute.lazy_exports import lazy_exports as _lazy_exports

if _typing.TYPE_CHECKING:
    from tracking.artifacts import LOG_ARTIFACT_BYTES, ArtifactSource, FileText, TreeDiff
    from tracking.base import (
        CreatesRuns, LoggedMetric, MovesRunStart, RunNotFound, RunStatus, RunView, Tracker, TrackingError
    )
    from tracking.binding import (
        JOB_RUN_STATUS, RunBinding, create_job_run, finish_run, run_env, run_labels, tag_run_with_job
    )
    from tracking.served import (
        PROXIED, SERVER_FILE, local_artifact_dir, node_tracking_uri, proxy_run_artifacts, serve_store, stop_tracking_server
    )
    from tracking.config import LOCAL_MLFLOW_UI, TrackingConfig, mlflow_ui_base, mlflow_ui_url, resolve_tracking
    from tracking.datasets import CONTEXT_TAG, DatasetInput, describe_datasets
    from tracking.logparse import (
        DEFAULT_PATTERN, MAX_DICT_CHARS, MAX_LINE_BYTES, STEP_PATTERN, MetricPoint, ParseResult, ParserState,
        parse_metrics
    )
    from tracking.logrules import MATCH_TIMEOUT_S, STEP_KEYS, MetricRules, builtin_key, captured_names, pattern_problem
    from tracking.logsync import (
        MAX_READ_BYTES, PARSE_CHUNK_BYTES, LogSync, Parsed, log_size, parse_attempts, parse_log, read_log_points
    )
    from tracking.memory import InMemoryTracker
    from tracking.mlflow_tracker import BATCH, MlflowTracker, mlflow_client
    from tracking.outbox import (
        Outbox, Write, WriteKind, apply_writes, drain_outbox, log_payload, spawn_writer, wait_drained, writer_turn
    )
    from tracking.outbox_reads import pending_writes, writer_pid
    from tracking.queued import QueuedTracker
    from tracking.sources import (
        AutoSource, LogScan, LogSource, MetricReader, MetricSource, MlflowSource, ObjectiveSource, source_of
    )
    from tracking.tags import (
        HOLDOUT_METRIC_PREFIX, CAMPAIGN_LABEL, CAMPAIGN_STARTED_TAG, CAMPAIGN_TAG, EXPERIMENT_LABEL,
        HOLDOUT_OF_LABEL, JOB_TAG, LLM_POLICY_ROLE, PARENT_TRIAL_TAG, PRUNE_REASON_TAG, SUSPECT_TAG,
        PRUNED_AT_STEP_TAG, CONFIRMS_TAG, CONFIRM_MEAN_TAG, CONFIRM_N_TAG, CONFIRM_SD_TAG, SEPARABLE_TAG, ROLE_TAG,
        RULES_LABEL, RUN_LABEL, SOURCE_TAG, TRIAL_LABEL, TRIAL_TAG, SPARE_TAG, RUN_NAME_TAG, VALUE_TAG
    )
    from tracking.usage import CALL_FIELDS, llm_usage_run, log_llm_params, log_llm_usage

_WHERE = {
    "LOG_ARTIFACT_BYTES": "tracking.artifacts",
    "ArtifactSource": "tracking.artifacts",
    "FileText": "tracking.artifacts",
    "TreeDiff": "tracking.artifacts",
    "CreatesRuns": "tracking.base",
    "LoggedMetric": "tracking.base",
    "MovesRunStart": "tracking.base",
    "RunNotFound": "tracking.base",
    "RunStatus": "tracking.base",
    "RunView": "tracking.base",
    "Tracker": "tracking.base",
    "TrackingError": "tracking.base",
    "JOB_RUN_STATUS": "tracking.binding",
    "RunBinding": "tracking.binding",
    "create_job_run": "tracking.binding",
    "finish_run": "tracking.binding",
    "run_env": "tracking.binding",
    "run_labels": "tracking.binding",
    "tag_run_with_job": "tracking.binding",
    "PROXIED": "tracking.served",
    "SERVER_FILE": "tracking.served",
    "local_artifact_dir": "tracking.served",
    "proxy_run_artifacts": "tracking.served",
    "node_tracking_uri": "tracking.served",
    "serve_store": "tracking.served",
    "stop_tracking_server": "tracking.served",
    "LOCAL_MLFLOW_UI": "tracking.config",
    "TrackingConfig": "tracking.config",
    "mlflow_ui_base": "tracking.config",
    "mlflow_ui_url": "tracking.config",
    "resolve_tracking": "tracking.config",
    "CONTEXT_TAG": "tracking.datasets",
    "DatasetInput": "tracking.datasets",
    "describe_datasets": "tracking.datasets",
    "DEFAULT_PATTERN": "tracking.logparse",
    "MAX_DICT_CHARS": "tracking.logparse",
    "MAX_LINE_BYTES": "tracking.logparse",
    "STEP_PATTERN": "tracking.logparse",
    "MetricPoint": "tracking.logparse",
    "ParseResult": "tracking.logparse",
    "ParserState": "tracking.logparse",
    "parse_metrics": "tracking.logparse",
    "MATCH_TIMEOUT_S": "tracking.logrules",
    "STEP_KEYS": "tracking.logrules",
    "MetricRules": "tracking.logrules",
    "builtin_key": "tracking.logrules",
    "captured_names": "tracking.logrules",
    "pattern_problem": "tracking.logrules",
    "MAX_READ_BYTES": "tracking.logsync",
    "PARSE_CHUNK_BYTES": "tracking.logsync",
    "LogSync": "tracking.logsync",
    "Parsed": "tracking.logsync",
    "log_size": "tracking.logsync",
    "parse_attempts": "tracking.logsync",
    "parse_log": "tracking.logsync",
    "read_log_points": "tracking.logsync",
    "InMemoryTracker": "tracking.memory",
    "BATCH": "tracking.mlflow_tracker",
    "MlflowTracker": "tracking.mlflow_tracker",
    "mlflow_client": "tracking.mlflow_tracker",
    "Outbox": "tracking.outbox",
    "Write": "tracking.outbox",
    "WriteKind": "tracking.outbox",
    "apply_writes": "tracking.outbox",
    "drain_outbox": "tracking.outbox",
    "log_payload": "tracking.outbox",
    "pending_writes": "tracking.outbox_reads",
    "spawn_writer": "tracking.outbox",
    "wait_drained": "tracking.outbox",
    "writer_pid": "tracking.outbox_reads",
    "writer_turn": "tracking.outbox",
    "QueuedTracker": "tracking.queued",
    "AutoSource": "tracking.sources",
    "LogScan": "tracking.sources",
    "LogSource": "tracking.sources",
    "MetricReader": "tracking.sources",
    "MetricSource": "tracking.sources",
    "MlflowSource": "tracking.sources",
    "ObjectiveSource": "tracking.sources",
    "source_of": "tracking.sources",
    "HOLDOUT_METRIC_PREFIX": "tracking.tags",
    "CAMPAIGN_LABEL": "tracking.tags",
    "CAMPAIGN_STARTED_TAG": "tracking.tags",
    "CAMPAIGN_TAG": "tracking.tags",
    "EXPERIMENT_LABEL": "tracking.tags",
    "HOLDOUT_OF_LABEL": "tracking.tags",
    "JOB_TAG": "tracking.tags",
    "LLM_POLICY_ROLE": "tracking.tags",
    "PARENT_TRIAL_TAG": "tracking.tags",
    "PRUNE_REASON_TAG": "tracking.tags",
    "SUSPECT_TAG": "tracking.tags",
    "PRUNED_AT_STEP_TAG": "tracking.tags",
    "CONFIRMS_TAG": "tracking.tags",
    "CONFIRM_MEAN_TAG": "tracking.tags",
    "CONFIRM_N_TAG": "tracking.tags",
    "CONFIRM_SD_TAG": "tracking.tags",
    "SEPARABLE_TAG": "tracking.tags",
    "ROLE_TAG": "tracking.tags",
    "RULES_LABEL": "tracking.tags",
    "RUN_LABEL": "tracking.tags",
    "SOURCE_TAG": "tracking.tags",
    "TRIAL_LABEL": "tracking.tags",
    "TRIAL_TAG": "tracking.tags",
    "SPARE_TAG": "tracking.tags",
    "RUN_NAME_TAG": "tracking.tags",
    "VALUE_TAG": "tracking.tags",
    "CALL_FIELDS": "tracking.usage",
    "llm_usage_run": "tracking.usage",
    "log_llm_params": "tracking.usage",
    "log_llm_usage": "tracking.usage",
}
"""Public name -> the module that defines it."""

__getattr__ = _lazy_exports(__name__, _WHERE)


__all__ = [
    "LOG_ARTIFACT_BYTES",
    "ArtifactSource",
    "FileText",
    "TreeDiff",
    "MovesRunStart",
    "CONTEXT_TAG",
    "DatasetInput",
    "describe_datasets",
    "BATCH",
    "CALL_FIELDS",
    "CAMPAIGN_LABEL",
    "CAMPAIGN_STARTED_TAG",
    "CAMPAIGN_TAG",
    "DEFAULT_PATTERN",
    "EXPERIMENT_LABEL",
    "HOLDOUT_OF_LABEL",
    "JOB_RUN_STATUS",
    "JOB_TAG",
    "LLM_POLICY_ROLE",
    "MATCH_TIMEOUT_S",
    "MAX_DICT_CHARS",
    "MAX_LINE_BYTES",
    "MAX_READ_BYTES",
    "PARENT_TRIAL_TAG",
    "PARSE_CHUNK_BYTES",
    "PRUNED_AT_STEP_TAG",
    "PRUNE_REASON_TAG",
    "CONFIRMS_TAG",
    "CONFIRM_MEAN_TAG",
    "CONFIRM_N_TAG",
    "CONFIRM_SD_TAG",
    "SEPARABLE_TAG",
    "SUSPECT_TAG",
    "ROLE_TAG",
    "RULES_LABEL",
    "RUN_LABEL",
    "SOURCE_TAG",
    "STEP_KEYS",
    "STEP_PATTERN",
    "TRIAL_LABEL",
    "TRIAL_TAG",
    "SPARE_TAG",
    "RUN_NAME_TAG",
    "VALUE_TAG",
    "AutoSource",
    "CreatesRuns",
    "InMemoryTracker",
    "LogScan",
    "LogSource",
    "LogSync",
    "LoggedMetric",
    "HOLDOUT_METRIC_PREFIX",
    "MetricPoint",
    "MetricReader",
    "MetricRules",
    "MetricSource",
    "MlflowSource",
    "MlflowTracker",
    "ObjectiveSource",
    "ParseResult",
    "Parsed",
    "ParserState",
    "Outbox",
    "QueuedTracker",
    "Write",
    "WriteKind",
    "apply_writes",
    "drain_outbox",
    "log_payload",
    "pending_writes",
    "writer_turn",
    "wait_drained",
    "spawn_writer",
    "writer_pid",
    "RunBinding",
    "RunNotFound",
    "RunStatus",
    "RunView",
    "Tracker",
    "TrackingConfig",
    "TrackingError",
    "builtin_key",
    "captured_names",
    "create_job_run",
    "finish_run",
    "llm_usage_run",
    "log_llm_params",
    "log_llm_usage",
    "log_size",
    "mlflow_client",
    "parse_log",
    "parse_metrics",
    "pattern_problem",
    "parse_attempts",
    "read_log_points",
    "resolve_tracking",
    "mlflow_ui_url",
    "mlflow_ui_base",
    "LOCAL_MLFLOW_UI",
    "run_env",
    "node_tracking_uri",
    "serve_store",
    "PROXIED",
    "SERVER_FILE",
    "local_artifact_dir",
    "proxy_run_artifacts",
    "stop_tracking_server",
    "run_labels",
    "source_of",
    "tag_run_with_job",
]
