"""`python -m evals run --suite quick|full [--only PART,...] [--out DIR] [--llm scripted|openai:MODEL|anthropic:MODEL]`

Prints the Markdown tables; saves results.json, summary.md and PNG plots under --out
(default $AUTORESEARCH_HOME/evals/<suite>-<UTC timestamp>). Exit code 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from datetime import datetime, timezone
from pathlib import Path

from evals.suites import SUITES, Part

KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}


def default_out(suite: str) -> Path:
    home = Path(os.environ.get("AUTORESEARCH_HOME") or Path.home() / ".autoresearch")
    return home / "evals" / f"{suite}-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}"


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals", description="Measure autoresearch against baselines.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a suite, print its tables, save JSON + PNG")
    run.add_argument("--suite", choices=sorted(SUITES), default="quick")
    parts = ", ".join(p.value for p in Part)
    run.add_argument("--only", default="", help=f"comma-separated parts (default all): {parts}")
    run.add_argument("--out", type=Path, default=None, help="results folder (default $AUTORESEARCH_HOME/evals/...)")
    run.add_argument("--llm", default="scripted",
                     help="the LLM arm's model: scripted (default), or openai:MODEL / anthropic:MODEL with its key set")
    args = parser.parse_args(argv)
    known = {p.value: p for p in Part}
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    unknown = [w for w in wanted if w not in known]
    if unknown:
        parser.error(f"--only: unknown part(s) {unknown}; choose from {sorted(known)}")
    args.parts = [known[w] for w in wanted] or list(Part)
    if args.llm != "scripted":
        provider, _, model = args.llm.partition(":")
        if provider not in KEY_ENV or not model:
            parser.error(f"--llm {args.llm!r}: expected scripted, openai:MODEL or anthropic:MODEL")
        if not os.environ.get(KEY_ENV[provider]):
            parser.error(f"--llm {args.llm}: set {KEY_ENV[provider]} (or use --llm scripted)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))  # unwinds: the daemon is stopped
    from evals.report import markdown, save
    from evals.run import run_suite

    out = args.out or default_out(args.suite)
    command = "python -m evals " + " ".join(sys.argv[1:] if argv is None else argv)
    results = run_suite(SUITES[args.suite], out, parts=args.parts, llm=args.llm, command=command,
                        save=lambda r: save(r, out))
    written = save(results, out)
    print(markdown(results))
    print("Saved: " + ", ".join(str(p) for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
