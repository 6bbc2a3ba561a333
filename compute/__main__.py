"""`python -m compute --home H --config JSON` runs the per-host daemon in the foreground."""

from compute.daemon import main

main()
