"""``redisson-py chaos SCENARIO``: break a topology under the lock and report what held.

Runs a failover scenario (see `redisson_py.chaos`) against topologies the harness
starts on this machine, prints each run's outcome on stderr as it ends, and a markdown
table on stdout: mode, runs, violations, operations, unavailability p50/max (partition:
also A told and B granted p50/max).
"""

from __future__ import annotations

import argparse
import sys

from redisson_py.chaos import MODES, SCENARIOS, markdown_table, partition_report, run_scenario
from redisson_py.cli import nemesis

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
        choices=(*SCENARIOS, "nemesis", "all"),
        metavar="SCENARIO",
        help=", ".join((*SCENARIOS, "all")) + "; or nemesis (a random fault schedule, below)",
    )
    parser.add_argument(
        "--topology",
        choices=("sentinel", "cluster", "replicated", "redlock"),
        default="sentinel",
        help="the replicated topology to break (replicated: one master, two replicas, "
        "no sentinel, the harness playing a managed service's failover; redlock modes "
        "always use five independent masters; redlock itself is for partition and "
        "nemesis); default: sentinel",
    )
    parser.add_argument(
        "--scenario",
        dest="split",
        default=None,
        metavar="NAME",
        help="partition: one of the topology's splits (sentinel: old-master, one-way, heal; "
        "cluster: minority-master, one-way, heal; replicated: old-master, one-way, heal, "
        "late-contender; redlock: minority-redlock); default: all",
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
        help="seconds of load in the load scenario, of faults in nemesis; default: 20",
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
    nemesis.add_arguments(parser)
    parser.set_defaults(handler=run, variant="plain")


def run(args: argparse.Namespace) -> int:
    if args.runs < 1:
        print("redisson-py chaos: --runs must be 1 or more", file=sys.stderr)
        return 2
    if args.scenario == "nemesis":
        return nemesis.run(args)
    if args.split and args.scenario not in ("partition", "all"):
        print("redisson-py chaos: --scenario is for the partition scenario", file=sys.stderr)
        return 2
    scenarios: tuple[str, ...] = SCENARIOS if args.scenario == "all" else (args.scenario,)
    if args.scenario == "all" and (reason := partition_report.unavailable(args.backend)):
        print(f"redisson-py chaos: partition left out: {reason}", file=sys.stderr)
        scenarios = tuple(s for s in scenarios if s != "partition")
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
                    split=args.split if scenario == "partition" else None,
                )
            )
        except ValueError as error:
            print(f"redisson-py chaos: {error}", file=sys.stderr)
            return 2
    print(markdown_table(summaries), flush=True)
    return 1 if any(s.violations and s.mode != "sync-off" for s in summaries) else 0
