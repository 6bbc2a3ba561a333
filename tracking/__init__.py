"""The tracking layer: MLflow binding, log-metric parsing and the one log -> run sync, metric
sources, tag names, LLM usage logging, and the one tracking-URI resolver.

Layers: compute <- tracking <- skills <- autoresearch. Everything here works on a `Tracker`:
`MlflowTracker` (any MLflow store), `InMemoryTracker` (tests, throwaway runs) and
`QueuedTracker` (writes on a background thread). `tracking.testing.tracker_suite` is the
conformance suite every implementation passes. Nothing here knows campaigns.
"""

from tracking.base import (
    LoggedMetric,
    RunNotFound,
    RunStatus,
    RunView,
    Tracker,
    TrackingError,
)
from tracking.binding import (
    JOB_RUN_STATUS,
    RunBinding,
    create_job_run,
    finish_run,
    run_env,
    run_labels,
    tag_run_with_job,
)
from tracking.config import TrackingConfig, resolve_tracking
from tracking.datasets import CONTEXT_TAG, DatasetInput, describe_datasets
from tracking.logparse import (
    DEFAULT_PATTERN,
    MAX_DICT_CHARS,
    MAX_LINE_BYTES,
    STEP_PATTERN,
    MetricPoint,
    ParseResult,
    ParserState,
    parse_metrics,
)
from tracking.logrules import (
    MATCH_TIMEOUT_S,
    STEP_KEYS,
    MetricRules,
    builtin_key,
    captured_names,
    pattern_problem,
)
from tracking.logsync import (
    MAX_READ_BYTES,
    LogSync,
    log_size,
    parse_log,
    read_log_points,
    stored_states,
)
from tracking.memory import InMemoryTracker
from tracking.mlflow_tracker import BATCH, MlflowTracker, mlflow_client
from tracking.queued import QueuedTracker
from tracking.sources import (
    AutoSource,
    LogScan,
    LogSource,
    MetricReader,
    MetricSource,
    MlflowSource,
    ObjectiveSource,
    source_of,
)
from tracking.tags import (
    CAMPAIGN_STARTED_TAG,
    CAMPAIGN_TAG,
    EXPERIMENT_LABEL,
    JOB_TAG,
    LLM_POLICY_ROLE,
    LOG_STATE_TAG,
    PARENT_TRIAL_TAG,
    PRUNE_REASON_TAG,
    PRUNED_AT_STEP_TAG,
    RERUN_OF_TAG,
    ROLE_TAG,
    RUN_LABEL,
    SOURCE_TAG,
    TRIAL_TAG,
    SPARE_TAG,
    RUN_NAME_TAG,
    attempt_of_state_tag,
    log_state_tag,
)
from tracking.usage import CALL_FIELDS, llm_usage_run, log_llm_params, log_llm_usage

__all__ = [
    "CONTEXT_TAG",
    "DatasetInput",
    "describe_datasets",
    "BATCH",
    "CALL_FIELDS",
    "CAMPAIGN_STARTED_TAG",
    "CAMPAIGN_TAG",
    "DEFAULT_PATTERN",
    "EXPERIMENT_LABEL",
    "JOB_RUN_STATUS",
    "JOB_TAG",
    "LLM_POLICY_ROLE",
    "LOG_STATE_TAG",
    "MATCH_TIMEOUT_S",
    "MAX_DICT_CHARS",
    "MAX_LINE_BYTES",
    "MAX_READ_BYTES",
    "PARENT_TRIAL_TAG",
    "PRUNED_AT_STEP_TAG",
    "PRUNE_REASON_TAG",
    "RERUN_OF_TAG",
    "ROLE_TAG",
    "RUN_LABEL",
    "SOURCE_TAG",
    "STEP_KEYS",
    "STEP_PATTERN",
    "TRIAL_TAG",
    "SPARE_TAG",
    "RUN_NAME_TAG",
    "AutoSource",
    "InMemoryTracker",
    "LogScan",
    "LogSource",
    "LogSync",
    "LoggedMetric",
    "MetricPoint",
    "MetricReader",
    "MetricRules",
    "MetricSource",
    "MlflowSource",
    "MlflowTracker",
    "ObjectiveSource",
    "ParseResult",
    "ParserState",
    "QueuedTracker",
    "RunBinding",
    "RunNotFound",
    "RunStatus",
    "RunView",
    "Tracker",
    "TrackingConfig",
    "TrackingError",
    "attempt_of_state_tag",
    "builtin_key",
    "captured_names",
    "create_job_run",
    "finish_run",
    "llm_usage_run",
    "log_llm_params",
    "log_llm_usage",
    "log_size",
    "log_state_tag",
    "mlflow_client",
    "parse_log",
    "parse_metrics",
    "pattern_problem",
    "read_log_points",
    "resolve_tracking",
    "run_env",
    "run_labels",
    "source_of",
    "stored_states",
    "tag_run_with_job",
]
