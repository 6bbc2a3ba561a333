"""`python -m compute --home H --config JSON` runs the per-host daemon in the foreground (what `compute up` spawns)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

from compute.control import serve_forever
from compute.daemon_config import DaemonConfig
from compute.errors import ComputeError
from compute.isolation import seal_process
from compute.paths import ComputePaths

log = logging.getLogger("compute.daemon")


def main(argv: list[str] | None = None) -> None:
    """Parse `--home` and `--config`, then serve until signalled (exit 0); a ComputeError exits 1 with its message."""
    parser = argparse.ArgumentParser(prog="python -m compute", description="Run the compute daemon.")
    parser.add_argument("--home", required=True)
    parser.add_argument("--config", default="{}", help="DaemonConfig as JSON")
    args = parser.parse_args(argv)
    seal_process()  # jobs may not read this process's environment or memory (compute/isolation.py)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    code = 0
    try:
        serve_forever(ComputePaths.of(args.home), DaemonConfig.model_validate(json.loads(args.config)))
    except ComputeError as err:
        log.error("%s", err)
        code = 1
    # Served and cleaned up (store closed, daemon.json removed, backend closed): exit now. A normal
    # interpreter exit can hang in a backend's own threads (a Ray client whose cluster went away
    # spun at 100% CPU after `compute down` had seen the daemon gone); attempts run in their own
    # sessions and are not touched.
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
