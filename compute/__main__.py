"""`python -m compute --home H --config JSON` runs the per-host daemon in the foreground (what `compute up` spawns)."""

from __future__ import annotations

import argparse
import json
import logging

from compute.control import serve_forever
from compute.daemon_config import DaemonConfig
from compute.errors import ComputeError
from compute.paths import ComputePaths

log = logging.getLogger("compute.daemon")


def main(argv: list[str] | None = None) -> None:
    """Parse `--home` and `--config`, then serve until signalled; a ComputeError exits 1 with its message."""
    parser = argparse.ArgumentParser(prog="python -m compute", description="Run the compute daemon.")
    parser.add_argument("--home", required=True)
    parser.add_argument("--config", default="{}", help="DaemonConfig as JSON")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        serve_forever(ComputePaths.of(args.home), DaemonConfig.model_validate(json.loads(args.config)))
    except ComputeError as err:
        log.error("%s", err)
        raise SystemExit(1) from None


if __name__ == "__main__":
    main()
