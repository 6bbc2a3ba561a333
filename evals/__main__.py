"""`python -m evals run --suite quick|full [--only PART,...] [--out DIR | --resume DIR] [--llm auto|scripted|openai:MODEL|anthropic:MODEL]`

The LLM arm (`--llm auto`, the default) uses a real provider when its key is set
(ANTHROPIC_API_KEY first, then OPENAI_API_KEY, with the model in DEFAULT_MODELS), else the
scripted model; `--llm scripted` never calls a paid API.

Prints the Markdown tables; saves results.json, summary.md and PNG plots under --out
(default $AUTORESEARCH_HOME/evals/<suite>-<UTC timestamp>). results.json is rewritten after
every measurement; `--resume DIR` continues an interrupted run in DIR, running only what is
missing. Exit code 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
import signal
import sys
from datetime import datetime, UTC
from pathlib import Path

from evals.suites import SUITES, Part

KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
DEFAULT_MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5-mini"}
"""The model `--llm auto` uses with a provider's key set."""


def auto_llm(environ: Mapping[str, str] = os.environ) -> str:
    """`provider:model` for the first provider whose key is set, else "scripted"."""
    provider = next((p for p, key in KEY_ENV.items() if environ.get(key)), None)
    return f"{provider}:{DEFAULT_MODELS[provider]}" if provider else "scripted"


def default_out(suite: str) -> Path:
    home = Path(os.environ.get("AUTORESEARCH_HOME") or Path.home() / ".autoresearch")
    return home / "evals" / f"{suite}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals", description="Measure autoresearch against baselines.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a suite, print its tables, save JSON + PNG")
    run.add_argument("--suite", choices=sorted(SUITES), default=None,
                     help="quick (default) or full; with --resume, the resumed run's suite")
    parts = ", ".join(p.value for p in Part)
    run.add_argument("--only", default="", help=f"comma-separated parts (default all; with --resume, the resumed run's): {parts}")
    run.add_argument("--out", type=Path, default=None, help="results folder (default $AUTORESEARCH_HOME/evals/...)")
    run.add_argument("--resume", type=Path, default=None, metavar="DIR",
                     help="continue an interrupted run saved in DIR: keep its measurements, run the missing ones")
    run.add_argument("--llm", default="auto",
                     help="the LLM arm's model: auto (default: a real provider when its key is set, else scripted), "
                     "scripted, or openai:MODEL / anthropic:MODEL with its key set")
    args = parser.parse_args(argv)
    known = {p.value: p for p in Part}
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    unknown = [w for w in wanted if w not in known]
    if unknown:
        parser.error(f"--only: unknown part(s) {unknown}; choose from {sorted(known)}")
    args.parts = [known[w] for w in wanted]
    if args.resume is not None:
        if args.out is not None and args.out != args.resume:
            parser.error("--resume DIR saves into DIR: drop --out, or give the same folder")
        if not (args.resume / "results.json").is_file():
            parser.error(f"--resume {args.resume}: no results.json there; start a run with --out {args.resume}")
    if args.llm == "auto":
        args.llm = auto_llm()
        if args.llm != "scripted" and (not args.only or "llm" in args.only):
            print(f"LLM arm: {args.llm} (its key is set; --llm scripted avoids API costs)", file=sys.stderr)
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
    from evals.report import load, markdown, save, save_json
    from evals.run import run_suite

    out = args.resume or args.out or default_out(args.suite or "quick")
    command = "python -m evals " + " ".join(sys.argv[1:] if argv is None else argv)
    try:
        earlier = load(args.resume) if args.resume else None
    except ValueError as exc:
        print(f"--resume {args.resume}: results.json is not a saved evals run ({exc}); start a new --out folder",
              file=sys.stderr)  # fmt: skip
        return 2
    suite = SUITES[args.suite] if args.suite else (earlier.suite if earlier else SUITES["quick"])
    if earlier is not None and earlier.suite != suite:
        print(f"--resume {args.resume}: that run is suite {earlier.suite.name!r} with its own counts, not "
              f"{suite.name!r}; drop --suite, or start a new --out folder", file=sys.stderr)  # fmt: skip
        return 2
    parts = args.parts or (earlier.parts if earlier else list(Part))
    results = run_suite(suite, out, parts=parts, llm=args.llm, command=command,
                        save=lambda r: save(r, out), checkpoint=lambda r: save_json(r, out), resume=earlier)
    written = save(results, out)
    print(markdown(results))
    print("Saved: " + ", ".join(str(p) for p in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
