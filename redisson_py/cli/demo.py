"""``redisson-py demo``: a live demo of the lock on an embedded Redis (or yours).

Starts a local topology with the harness's process backend (the system's redis-server,
else the one bundled with the ``embedded`` extra), runs worker processes that contend
for one lock around a shared non-atomic counter, shows their progress and ends with a
summary: acquisitions per worker, hand-off latency, lost increments (0). Exit status 0
when nothing was lost, 1 otherwise or on an error, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import sys

from redisson_py.demo import DemoOptions, format_summary, run_demo
from redisson_py.demo.options import TOPOLOGIES

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``demo`` to the ``redisson-py`` parser."""
    parser = subparsers.add_parser(
        "demo",
        help="watch worker processes share one lock (starts a local Redis)",
        description="Start a local Redis topology (or use --config), run worker processes "
        "that increment a shared counter under one lock without atomicity, show their "
        "progress, and end with acquisitions per worker, hand-off latency and lost "
        "increments (which must be 0). Everything started is stopped at the end, "
        "Ctrl-C included.",
    )
    parser.add_argument(
        "--topology",
        metavar="KIND",
        default=None,
        help=f"the local topology to start: {', '.join(TOPOLOGIES)} (default: single)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        default=None,
        help="a Redisson YAML config: run against that deployment instead of starting one "
        "(several documents: a RedLock over those masters)",
    )
    parser.add_argument("--workers", metavar="N", default="4", help="worker processes (default: 4)")
    parser.add_argument(
        "--duration", metavar="SECONDS", default="10", help="how long they run (default: 10)"
    )
    parser.add_argument(
        "--think-ms",
        metavar="MS",
        default="1",
        help="time each worker spends outside the lock between acquisitions (default: 1)",
    )
    parser.set_defaults(handler=run)


NEXT_STEP = """
next: a lock from your own code, on a Redis that stays up:
  redisson-py topology up single --detach > redisson.yaml
  then the example under "Your first lock" in README.md (or docs/index.md)
  redisson-py topology down single        # when done"""
"""What the demo prints after a summary with nothing lost: the README's first lock."""


def run(args: argparse.Namespace) -> int:
    """Run the demo and print its summary; see the module docstring for the exit status."""
    options = DemoOptions.parse(
        topology=args.topology,
        config=args.config,
        workers=args.workers,
        duration=args.duration,
        think_ms=args.think_ms,
    )
    outcome = run_demo(options, sys.stdout)
    lines = format_summary(outcome.summary, title="")
    print("\n".join(lines[1:]), flush=True)
    if outcome.ok and not outcome.interrupted:
        print(NEXT_STEP, flush=True)
    for failure in outcome.failures:
        print(f"redisson-py: error: {failure}", file=sys.stderr, flush=True)
    if outcome.interrupted:
        print("redisson-py: interrupted (the summary covers what ran)", file=sys.stderr)
        return 130
    return 0 if outcome.ok else 1
