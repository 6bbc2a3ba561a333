"""Record a run's datasets as MLflow dataset inputs, and read them back.

Each dataset becomes one input of the run: its name, its source path (`source_type`
`local`; a FUSE-mounted bucket is a local path too) and a digest from
`compute.dataset_digest` (a content hash up to a size limit, else size and mtime; MLflow keeps
36 characters of it as the digest, the whole one in the input's profile), with the context tag `mlflow.data.context` set to the dataset's name. The MLflow UI shows them under
the run's "Datasets used".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from os import PathLike
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from compute.data import dataset_digest

if TYPE_CHECKING:
    from mlflow.tracking import MlflowClient

CONTEXT_TAG = "mlflow.data.context"
_MLFLOW_DIGEST_CHARS = 36
"""MLflow refuses longer digests."""


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


def log_datasets(client: MlflowClient, run_id: str, data: Mapping[str, str | PathLike[str]]) -> None:
    """Add the datasets to run `run_id` as MLflow dataset inputs."""
    from mlflow.entities import Dataset, InputTag
    from mlflow.entities import DatasetInput as MlflowInput

    inputs = [
        MlflowInput(Dataset(name=d.name, digest=d.digest[:_MLFLOW_DIGEST_CHARS], source_type="local", source=d.source,
                            profile=json.dumps({"digest": d.digest})),
                    tags=[InputTag(CONTEXT_TAG, d.name)])
        for d in describe_datasets(data)
    ]
    if inputs:
        client.log_inputs(run_id, datasets=inputs)


def run_datasets(client: MlflowClient, run_id: str) -> list[DatasetInput]:
    """The datasets recorded on a run, in the order logged."""
    run = client.get_run(run_id)
    return [DatasetInput(name=i.dataset.name, source=i.dataset.source, digest=_full_digest(i.dataset))
            for i in (run.inputs.dataset_inputs if run.inputs else [])]


def _full_digest(dataset: object) -> str:
    try:
        return str(json.loads(getattr(dataset, "profile", None) or "{}")["digest"])
    except (ValueError, KeyError, TypeError):
        return str(getattr(dataset, "digest", ""))
