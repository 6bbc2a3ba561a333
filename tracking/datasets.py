"""A run's datasets: what `Tracker.log_datasets` records (MLflow: dataset inputs).

Each dataset becomes one input of the run: its name, its source path (`source_type`
`local`; a FUSE-mounted bucket is a local path too) and a digest from
`compute.dataset_digest` (a content hash up to a size limit, else size and mtime; MLflow keeps
36 characters of it as the digest, the whole one in the input's profile), with the context tag
`mlflow.data.context` set to the dataset's name. The MLflow UI shows them under the run's
"Datasets used".
"""

from __future__ import annotations

from collections.abc import Mapping
from os import PathLike

from pydantic import BaseModel, ConfigDict

from compute.data import dataset_digest

CONTEXT_TAG = "mlflow.data.context"


class DatasetInput(BaseModel):
    """One dataset a run read, as recorded in MLflow."""

    model_config = ConfigDict(frozen=True)

    name: str
    """The dataset's name (`train`)."""
    source: str
    """Its absolute path."""
    digest: str
    """`sha256:<hex>`, `size+mtime:<bytes>:<mtime ns>`, or `unreadable: <why>`."""


def describe_datasets(data: Mapping[str, str | PathLike[str]]) -> list[DatasetInput]:
    """Name, source and digest of each dataset (an unreadable one is still listed, with why)."""
    out = []
    for name, path in data.items():
        try:
            digest = dataset_digest(str(path))
        except OSError as err:
            digest = f"unreadable: {err.strerror or err}"
        out.append(DatasetInput(name=name, source=str(path), digest=digest))
    return out
