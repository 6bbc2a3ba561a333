"""The `data:` section of a campaign config: named read-only inputs of every trial.

```yaml
data:
  train: {path: /datasets/shakespeare/train.bin}
  val:   {path: ./data/val.bin}        # relative to the config file
```

Each path resolves against the config file's folder and must exist when the config is
loaded (a missing one is a config error naming file, line and field before any job starts).
Trials see each as `AR_DATA_<NAME>`; in a container it is mounted read-only at `/data/<name>`.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationInfo, field_validator

from autoresearch.campaign._base import Section, paths_checked, resolve_path


class Dataset(Section):
    """One dataset: a file or a folder (a FUSE-mounted bucket works too)."""

    path: Path
    """Absolute, or relative to the config file; resolved to absolute."""

    @field_validator("path")
    @classmethod
    def _resolve(cls, value: Path, info: ValidationInfo) -> Path:
        path = resolve_path(value, info, "dataset path")
        if paths_checked(info) and not path.exists():
            raise ValueError(f"dataset path {str(value)!r} does not exist (resolved to {path}): create or mount it, "
                             "or fix the path")
        return path
