"""``redisson-py chaos nemesis``: a randomized nemesis run (see
`redisson_py.chaos.nemesis`), wired into the ``chaos`` command.

::

    redisson-py chaos nemesis --topology sentinel|cluster|replicated|redlock --duration S
        --seed N [--mode sync-on|sync-off|queued|redlock] [--schedule network|process]
        [--workers K] [--runs R] [--out DIR] [--dns]

Each run's progress goes to stderr, one markdown table row per run to stdout, and each
run's JSON (and journals) to its directory, named on stderr. ``--runs R`` plays seeds N,
N+1, ... N+R-1. Exit status: 0 when every run kept its promise, 1 when one broke it
(overlapping holds where the mode promises none, or a stale write accepted), 2 for bad
options or a machine that cannot run it (the reason in one sentence), 3 when a run could
not be carried out (a topology or a worker did not start).
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import sys
from pathlib import Path

from redisson_py.chaos.nemesis import (
    SCHEDULES,
    NemesisOptions,
    NemesisUnavailableError,
    RunReport,
    markdown_table,
    run_nemesis,
)
from redisson_py.testing.errors import TopologyError

__all__ = ["add_arguments", "run"]

EXIT_KEPT = 0
EXIT_BROKEN = 1
EXIT_USAGE = 2
EXIT_FAILED = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the nemesis's own options to the ``chaos`` parser (``--topology``,
    ``--duration``, ``--mode``, ``--runs`` are the ``chaos`` command's)."""
    group = parser.add_argument_group(
        "nemesis",
        "`chaos nemesis`: a random fault schedule from --seed against --topology "
        "(sentinel, cluster, replicated, redlock) for --duration seconds, --mode sync-on "
        "(default), sync-off, queued (the queued lock, sync on) or redlock (the redlock topology's "
        "only mode)",
    )
    group.add_argument(
        "--seed", type=int, default=None, help="the schedule's seed; default: a random one"
    )
    group.add_argument(
        "--schedule",
        choices=SCHEDULES,
        default="network",
        help="network: partitions, one-way cuts, isolated masters, replica cuts, pauses, "
        "kills (replicated: also managed-style failovers); process: a worker paused past "
        "its lease, a node's clock jumped; default: network",
    )
    group.add_argument(
        "--workers", type=int, default=4, help="worker processes (2 or more); default: 4"
    )
    group.add_argument(
        "--dns",
        action="store_true",
        help="replicated only: the workers reach the master by a host name (the service's "
        "primary endpoint, served by a dnsmasq the run owns) that moves 0.5-3 s after each "
        "promotion; needs root and dnsmasq",
    )
    group.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="keep each run's journals and JSON in DIR/<topology>-<mode>-<schedule>-<seed>; "
        "default: a new temporary directory per run",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``args.runs`` nemesis runs; print the table; the exit status above."""
    if args.backend == "container":
        print("redisson-py chaos nemesis: needs the process backend", file=sys.stderr)
        return EXIT_USAGE
    modes = args.modes.split(",") if args.modes else [None]
    if len(modes) != 1:
        print("redisson-py chaos nemesis: one --mode per run", file=sys.stderr)
        return EXIT_USAGE
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 10**6)
    reports: list[RunReport] = []
    for number in range(args.runs):
        options = NemesisOptions(
            topology=args.topology,
            mode=modes[0],
            schedule=args.schedule,
            duration=args.duration,
            seed=seed + number,
            workers=args.workers,
            dns=args.dns,
        )
        try:
            options.check()
        except ValueError as error:
            print(f"redisson-py chaos nemesis: {error}", file=sys.stderr)
            return EXIT_USAGE
        if args.out is not None:
            name = f"{options.topology}-{options.resolved_mode}-{options.schedule}-{options.seed}"
            options = dataclasses.replace(options, directory=args.out / name)
        try:
            report = run_nemesis(options, progress=_progress)
        except NemesisUnavailableError as error:
            print(f"redisson-py chaos nemesis: cannot run here: {error}", file=sys.stderr)
            return EXIT_USAGE
        except TopologyError as error:
            print(f"redisson-py chaos nemesis: the run failed: {error}", file=sys.stderr)
            return EXIT_FAILED
        reports.append(report)
        _progress(f"nemesis: seed {options.seed}: JSON in {report.directory}/report.json")
    print(markdown_table(reports), flush=True)
    return EXIT_BROKEN if any(r.violations() for r in reports) else EXIT_KEPT


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
