"""tracking: MLflow binding. Here so far: a run's datasets as MLflow dataset inputs."""

from tracking.datasets import (
    CONTEXT_TAG,
    DatasetInput,
    describe_datasets,
    log_datasets,
    run_datasets,
)

__all__ = ["CONTEXT_TAG", "DatasetInput", "describe_datasets", "log_datasets", "run_datasets"]
