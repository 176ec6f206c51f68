"""``redisson-py chaos SCENARIO``: break a topology under the lock and report what held.

Runs a failover scenario (see :mod:`redisson_py.chaos`) against topologies the harness
starts on this machine, prints each run's outcome on stderr as it ends, and a markdown
table on stdout: mode, runs, violations, operations, unavailability p50/max.
"""

from __future__ import annotations

import argparse
import sys

from redisson_py.chaos import MODES, SCENARIOS, markdown_table, run_scenario

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``chaos`` to the ``redisson-py`` parser."""
    parser = subparsers.add_parser(
        "chaos",
        help="run a failover scenario and print what each lock mode guarantees",
        description="Run a failover scenario against a local topology and print a table "
        "of violations, operations and unavailability per mode. Scenarios and their "
        "modes: " + "; ".join(f"{s} ({', '.join(MODES[s])})" for s in SCENARIOS) + ".",
    )
    parser.add_argument(
        "scenario",
        choices=(*SCENARIOS, "all"),
        metavar="SCENARIO",
        help=", ".join((*SCENARIOS, "all")),
    )
    parser.add_argument(
        "--topology",
        choices=("sentinel", "cluster"),
        default="sentinel",
        help="the replicated topology to break (redlock modes always use "
        "five independent masters); default: sentinel",
    )
    parser.add_argument("--runs", type=int, default=1, help="runs per mode; default: 1")
    parser.add_argument(
        "--backend",
        choices=("container", "process", "auto"),
        default="auto",
        help="containers or redis-server processes; default: auto",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=20.0,
        help="seconds of load in the load scenario; default: 20",
    )
    parser.add_argument(
        "--modes",
        "--mode",
        default=None,
        help="comma-separated modes to run (default: all of the scenario's), such as "
        "`race --mode fencing`",
    )
    variant = parser.add_mutually_exclusive_group()
    variant.add_argument(
        "--fresh",
        action="store_const",
        const="fresh",
        dest="variant",
        help="race: no settle time after start (a sentinel's view of the "
        "replica reset; a cluster used before gossip settles)",
    )
    variant.add_argument(
        "--rejoin",
        action="store_const",
        const="rejoin",
        dest="variant",
        help="race: the replica cut is the old master that rejoined after an earlier failover",
    )
    parser.set_defaults(handler=run, variant="plain")


def run(args: argparse.Namespace) -> int:
    if args.runs < 1:
        print("redisson-py chaos: --runs must be 1 or more", file=sys.stderr)
        return 2
    scenarios = SCENARIOS if args.scenario == "all" else (args.scenario,)
    modes = args.modes.split(",") if args.modes else None
    summaries = []
    for scenario in scenarios:
        try:
            summaries.extend(
                run_scenario(
                    scenario,
                    topology=args.topology,
                    runs=args.runs,
                    backend=args.backend,
                    duration=args.duration,
                    modes=modes if args.scenario != "all" else None,
                    progress=lambda line: print(line, file=sys.stderr, flush=True),
                    variant=args.variant if scenario == "race" else "plain",
                )
            )
        except ValueError as error:
            print(f"redisson-py chaos: {error}", file=sys.stderr)
            return 2
    print(markdown_table(summaries), flush=True)
    return 1 if any(s.violations and s.mode != "sync-off" for s in summaries) else 0
