"""The tracking store served to jobs on other hosts.

A job on another Ray node cannot open the home's SQLite store (it would find no run and leave an
empty `mlflow.db` on that node). So when the store is a local SQLite file and the home's daemon
places jobs on a Ray cluster (`compute up --backend ray --address ...`), the first client that
binds a run to a job (`run_env`: the runner, `jobs submit --mlflow`) starts an `mlflow server` on
this host serving that store, and jobs get its `http://` URI as MLFLOW_TRACKING_URI. It listens
only on this host's address on the route to the Ray head (not 0.0.0.0) and accepts only that Host
header; it has no authentication (docs/ray.md). Its address is recorded in `<home>/mlflow-server.json`:
later clients reuse it, and one that finds it dead starts it again on the same port (jobs started
earlier keep reaching it). It lives until `compute down` (`stop_tracking_server`).

Artifacts go the same way: the server proxies `mlflow-artifacts:` URIs to the store's artifact
folder (`--artifacts-destination`, the config's `artifact_location`), and a run bound to a job
through the server gets its artifact URI there (`proxy_run_artifacts`: `file:///.../mlartifacts/
<run id>/artifacts` becomes `mlflow-artifacts:/<run id>/artifacts`, the same folder), so
`mlflow.log_artifact` on any node uploads to the folder the MLflow UI on this host reads. Writers
on this host, whose tracking URI is the SQLite file, write such a run's artifacts into that folder
directly (`local_artifact_dir`).
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from compute.backends.ray_address import resolve_ray_address
from compute.paths import ComputePaths
from tracking.base import TrackingError
from tracking.config import TrackingConfig
from tracking.sqlite_bulk import SqliteBulk

PROXIED = "mlflow-artifacts:/"
"""The root of artifact URIs the served store's server proxies to `artifact_location`."""
SERVER_FILE = "mlflow-server.json"
"""In the home: the served store's `url`, `host`, `port`, `pid` and `store` (its tracking URI)."""
_START_S = 180.0


def node_tracking_uri(config: TrackingConfig, home: str | os.PathLike[str] | None = None) -> str:
    """The tracking URI a job of `home`'s daemon logs to: `config`'s, or the served store's
    `http://HOST:PORT` when that is a local SQLite file and jobs may run on other hosts."""
    uri = config.tracking_uri
    paths = ComputePaths.of(home)
    if not uri.startswith("sqlite:///"):
        return uri
    try:
        settings = json.loads(paths.daemon_info.read_text()).get("config") or {}
    except (OSError, ValueError):
        return uri  # no daemon yet: the one a client starts by default runs jobs here
    if settings.get("backend") != "ray" or resolve_ray_address(settings.get("ray_address")) == "local":
        return uri
    return serve_store(config, paths.home, _address_toward(settings["ray_address"]))


def proxy_run_artifacts(config: TrackingConfig, run_id: str) -> bool:
    """Point the run's artifact URI at the server's proxy (`PROXIED`), same folder; False when it stays
    as it was: a location outside `artifact_location` (an experiment's own), or an MLflow release
    whose tables are not written here (`SqliteBulk`: its artifacts then land on the job's node)."""
    bulk = SqliteBulk.of(config.tracking_uri)
    if bulk is None or not config.artifact_location:
        return False
    return bulk.move_artifact_uri(run_id, config.artifact_location, PROXIED)


def local_artifact_dir(artifact_uri: str, config: TrackingConfig) -> Path | None:
    """The folder on this host of a proxied artifact URI (`mlflow-artifacts:/X` -> X under the
    config's `artifact_location`); None for any other URI."""
    location = config.artifact_location or ""
    if not artifact_uri.startswith(PROXIED) or not location.startswith("file://"):
        return None
    return Path(urllib.parse.urlparse(location).path, artifact_uri.removeprefix(PROXIED))


def serve_store(config: TrackingConfig, home: Path, host: str) -> str:
    """The URL of the `mlflow server` serving `config`'s store on `host` (started if not answering)."""
    with open(home / f"{SERVER_FILE}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one server per home, even with several clients starting
        record = _record(home)
        if record.get("store") == config.tracking_uri and record.get("host") == host and _answers(record["url"]):
            return str(record["url"])
        _stop(record)
        kept = record.get("port")
        ports = [kept] if record.get("host") == host and isinstance(kept, int) else []
        for port in [*ports, _free_port(host)]:
            started = _start(config, home, host, port)
            if started is not None:
                (home / SERVER_FILE).write_text(json.dumps(started))
                return str(started["url"])
        log = _log_path(home).read_text(errors="replace")[-2000:]
        raise TrackingError(f"could not start `mlflow server` on {host} for {config.tracking_uri} (jobs on other "
                            f"Ray nodes log through it); its log ({_log_path(home)}) ends with: {log}")


def stop_tracking_server(home: str | os.PathLike[str] | None = None) -> bool:
    """Stop the home's served store, if any (`compute down`); whether one was running."""
    paths = ComputePaths.of(home)
    record = _record(paths.home)
    (paths.home / SERVER_FILE).unlink(missing_ok=True)
    return _stop(record)


def _start(config: TrackingConfig, home: Path, host: str, port: int) -> dict[str, object] | None:
    url = f"http://{host}:{port}"
    argv = [sys.executable, "-m", "mlflow", "server", "--backend-store-uri", config.tracking_uri,
            "--host", host, "--port", str(port), "--workers", "1", "--allowed-hosts", f"{host}:{port},{host}"]
    if config.artifact_location:
        argv += ["--artifacts-destination", config.artifact_location]
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    with open(_log_path(home), "ab") as log:
        proc = subprocess.Popen(argv, cwd=home, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + _START_S
    while not _answers(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop({"pid": proc.pid})
            return None
        time.sleep(0.3)
    return {"url": url, "host": host, "port": port, "pid": proc.pid, "store": config.tracking_uri}


def _stop(record: dict[str, object]) -> bool:
    pid = record.get("pid")
    if not isinstance(pid, int) or not _is_mlflow_server(pid):
        return False  # gone, or a recycled pid: never signal someone else's processes
    try:
        os.killpg(pid, signal.SIGTERM)  # the server and its workers: started in a session of its own
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _is_mlflow_server(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"mlflow" in argv and b"server" in argv


def _record(home: Path) -> dict[str, object]:
    try:
        record = json.loads((home / SERVER_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _log_path(home: Path) -> Path:
    return home / "mlflow-server.log"


def _answers(url: object) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _address_toward(ray_address: str) -> str:
    """This host's address on the route to the Ray head (the one the nodes reach it by)."""
    text = ray_address.removeprefix("ray://")
    head = os.environ.get("RAY_ADDRESS", "").removeprefix("ray://") if text == "auto" else text
    head_host = head.rsplit(":", 1)[0].strip("[]") or socket.gethostname()
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect((head_host, 9))  # no packet is sent: this only picks the route
            return str(probe.getsockname()[0])
    except OSError:
        return socket.gethostbyname(socket.gethostname())


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])
