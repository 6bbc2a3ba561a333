"""`python -m autoresearch.cli ...`: the `autoresearch` command."""

from autoresearch.cli import main

main()
