"""A local S3-compatible store for the tests: moto's server (installed from the package index with
the `dev` extra), on a free port of this host, reached through `pyarrow.fs` as a real bucket.

`S3Server.bucket()` makes a fresh bucket and returns the `--storage` URI of a prefix in it; the
endpoint travels in the URI (`endpoint_override`, `scheme=http`), the credentials in the
environment (`CREDENTIALS`, as pyarrow reads them on the daemon's host and on every node)."""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true"}
"""What each process that reaches the store needs in its environment (moto takes any key)."""


class S3Server:
    def __init__(self, host: str, port: int) -> None:
        self.endpoint = f"{host}:{port}"
        self._names = itertools.count()

    def uri(self, bucket: str, prefix: str) -> str:
        return f"s3://{bucket}/{prefix}?endpoint_override={self.endpoint}&scheme=http&region=us-east-1"

    def bucket(self, prefix: str = "research") -> str:
        """A new empty bucket: the `--storage` URI of `prefix` in it."""
        import pyarrow.fs  # type: ignore[import-untyped]

        name = f"bucket-{os.getpid()}-{next(self._names)}"
        fs, _ = pyarrow.fs.FileSystem.from_uri(self.uri(name, prefix) + "&allow_bucket_creation=true")
        fs.create_dir(name)
        return self.uri(name, prefix)

    def keys(self, uri: str) -> list[str]:
        """Every object under the URI's prefix, relative to it."""
        import pyarrow.fs

        fs, base = pyarrow.fs.FileSystem.from_uri(uri)
        infos = fs.get_file_info(pyarrow.fs.FileSelector(base, recursive=True, allow_not_found=True))
        return sorted(i.path[len(base) + 1:] for i in infos if i.type == pyarrow.fs.FileType.File)


@contextmanager
def s3_server() -> Iterator[S3Server]:
    """Run moto's S3 server on a free local port, with `CREDENTIALS` in this process's environment."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per request otherwise
    saved = {k: os.environ.get(k) for k in CREDENTIALS}
    os.environ.update(CREDENTIALS)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        yield S3Server(*server.get_host_and_port())
    finally:
        server.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
