"""The benchmark runner: ``python -m benchmarks [--full] [--only NAMES] [--out DIR]``.

Starts a single redis-server (later five independent ones for RedLock, then a 3-master
cluster) on 127.0.0.1 with the test harness's process backend, runs every benchmark in
one run, prints the markdown report, and writes ``results.json``, ``results.md`` and the
PNG plots to ``benchmarks/results/`` (``--only`` runs a subset and writes to ``results/partial/``
unless ``--out`` says otherwise). Progress goes to stderr. Everything it started is
stopped at the end, Ctrl-C included.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import (
    bench_asyncio_contended,
    bench_cluster,
    bench_contended,
    bench_handoff,
    bench_held,
    bench_memory,
    bench_names,
    bench_redlock,
    bench_uncontended,
    bench_waiters,
    bench_watchdog,
    plots,
    report,
    scale_report,
)
from benchmarks.contenders import Server
from benchmarks.machine import load_average, machine_facts
from benchmarks.targets import judge, judge_scale
from redisson_py.testing import start_topology

RESULTS = Path(__file__).resolve().parent / "results"
ALL = (
    "uncontended",
    "handoff",
    "contended",
    "queued",
    "asyncio_contended",
    "redlock",
    "cluster",
    "watchdog",
    "memory",
)
SCALE = ("waiters", "held", "names")
"""How cost grows (``--scale``): not in the default run, which has a time budget."""
BUDGET_SECONDS = 600
SCALE_TOPOLOGIES = ("single", "cluster")
NAMES_CYCLES = {"single": bench_names.CYCLES, "cluster": 200_000}
"""Lock names per topology: a million on a single server; on the cluster, where each
acquire also waits for a replica, fewer, so the run stays within minutes."""


def _watchdog(server: Server, quick: bool) -> dict[str, Any]:
    """The watchdog's cost on a single server, then on a master with one replica and
    replica sync on (each round's renewals confirmed by a WAIT in the same round trip)."""
    locks, intervals = (1000, 3) if quick else (bench_watchdog.LOCKS, 6)
    single = bench_watchdog.run(server, locks=locks, intervals=intervals)
    with start_topology("master-replica", backend="process", replicas_per_master=1) as pair:
        master = pair.master()
        [replica] = [node for node in pair.data_nodes if node is not master]
        replicated = bench_watchdog.run(
            Server(master.port), locks=locks, intervals=intervals, replica=Server(replica.port)
        )
    return {**single, "replicated": replicated}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description="Benchmarks of redisson-py against the floor and the peer libraries.",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help=f"memory benchmark over {bench_memory.FULL_CYCLES:,} cycles instead of "
        f"{bench_memory.DEFAULT_CYCLES:,} (adds a few minutes)",
    )
    parser.add_argument(
        "--scale",
        action="store_true",
        help=f"how cost grows instead: {', '.join(SCALE)} at their full sizes, on a single "
        "server and a cluster (about 13 minutes; writes scale.md and scale.json)",
    )
    parser.add_argument(
        "--only",
        default=None,
        metavar="NAMES",
        help=f"comma-separated subset of: {', '.join(ALL)} (with --scale: of {', '.join(SCALE)})",
    )
    parser.add_argument("--out", type=Path, default=None, help="where to write the results")
    parser.add_argument(
        "--render",
        action="store_true",
        help="measure nothing: rebuild results.md and the plots from results.json in the "
        "output directory (after a change to the report's format)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke test of the runner in about a minute: few samples, figures not "
        "meaningful; writes to results/partial/ unless --out is given",
    )
    return parser


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _timed(name: str, step: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    load = load_average()
    _log(f"[{name}] running (load average {load[0]:.2f})" if load else f"[{name}] running")
    started = time.monotonic()
    result = step()
    result["seconds"] = time.monotonic() - started
    result["load_average_before"] = load
    result["load_average_after"] = load_average()
    _log(f"[{name}] done in {result['seconds']:.0f} s")
    return result


def _publish(out: Path, document: dict[str, Any]) -> str:
    """Judge the targets, write the report and the plots to ``out``; return the report."""
    verdicts = judge(document["results"])
    text = report.markdown(document, verdicts)
    report.write(out, document, verdicts, text)
    pictures = plots.draw_all(out, document["results"])
    _log(
        f"wrote {out / 'results.json'}, {out / 'results.md'} and "
        f"{', '.join(p.name for p in pictures)}"
    )
    return text


def _publish_scale(out: Path, document: dict[str, Any]) -> str:
    """The scale run's report and plots (``scale.md``, ``scale.json``, PNGs)."""
    verdicts = judge_scale(document["results"])
    text = scale_report.markdown(document, verdicts)
    report.write(out, document, verdicts, text, stem="scale")
    pictures = plots.draw_scale(out, document["results"])
    _log(
        f"wrote {out / 'scale.json'}, {out / 'scale.md'} and {', '.join(p.name for p in pictures)}"
    )
    return text


def _render(out: Path, scale: bool) -> int:
    source = out / ("scale.json" if scale else "results.json")
    try:
        document = json.loads(source.read_text())
    except (OSError, ValueError) as error:
        _log(f"cannot read {source}: {error}")
        return 1
    document.pop("targets", None)  # judged again from the figures
    print((_publish_scale if scale else _publish)(out, document), flush=True)
    return 0


def _scale_sizes(quick: bool) -> dict[str, Any]:
    if quick:
        return {
            "waiters": {"sizes": (10, 100), "threads": (50, 10)},
            "held": {"sizes": (1_000,)},
            "names": dict.fromkeys(SCALE_TOPOLOGIES, (10_000, 1_000)),
        }
    return {
        "waiters": {
            "sizes": bench_waiters.ASYNCIO_SIZES,
            "threads": (bench_waiters.THREADS, bench_waiters.THREAD_NAMES),
        },
        "held": {"sizes": bench_held.SIZES},
        "names": {
            kind: (NAMES_CYCLES[kind], NAMES_CYCLES[kind] // 10) for kind in SCALE_TOPOLOGIES
        },
    }


def _scale_step(name: str, topology: Any, kind: str, sizes: dict[str, Any]) -> dict[str, Any]:
    """One scale benchmark on one topology."""
    if name == "waiters":
        return bench_waiters.run(
            topology, sizes=sizes["waiters"]["sizes"], threads=sizes["waiters"]["threads"], log=_log
        )
    if name == "held":
        return bench_held.run(topology, sizes=sizes["held"]["sizes"], log=_log)
    cycles, latches = sizes["names"][kind]
    return bench_names.run(topology, cycles=cycles, latches=latches, log=_log)


def _run_scale(chosen: tuple[str, ...], quick: bool, out: Path, command: str) -> int:
    """The scale benchmarks on a single server, then on a cluster; one report."""
    started = time.monotonic()
    sizes = _scale_sizes(quick)
    results: dict[str, Any] = {name: {} for name in chosen}
    facts: dict[str, Any] = {}
    for kind in SCALE_TOPOLOGIES:
        with start_topology(kind, backend="process") as topology:
            if not facts:
                version = topology.master().info("server").get("redis_version", "unknown")
                facts = machine_facts(f"{version} ({topology.backend_impl.describe()})")
            for name in chosen:
                step = functools.partial(_scale_step, name, topology, kind, sizes)
                results[name][kind] = _timed(f"{name}, {kind}", step)
    document: dict[str, Any] = {
        "command": command,
        "machine": facts,
        "seconds": time.monotonic() - started,
        "results": results,
    }
    print(_publish_scale(out, document), flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    names = SCALE if args.scale else ALL
    chosen = names if args.only is None else tuple(n.strip() for n in args.only.split(","))
    unknown = [n for n in chosen if n not in names]
    if unknown:
        hint = "" if args.scale else f" (with --scale: {', '.join(SCALE)})"
        _log(f"unknown benchmark(s) {', '.join(unknown)}: choose from {', '.join(names)}{hint}")
        return 2
    partial = args.only is not None or args.quick
    out = args.out or (RESULTS / "partial" if partial else RESULTS)
    if args.render:
        return _render(out, args.scale)
    given = sys.argv[1:] if argv is None else list(argv)
    command = "python -m benchmarks" + "".join(f" {a}" for a in given)
    if args.scale:
        return _run_scale(chosen, args.quick, out, command)
    started = time.monotonic()
    results: dict[str, Any] = {}
    facts: dict[str, Any] = {}
    cycles = bench_memory.FULL_CYCLES if args.full else bench_memory.DEFAULT_CYCLES
    quick = args.quick
    if quick:
        cycles = 2 * bench_memory.FIRST_CHECKPOINT

    with start_topology("single", backend="process") as topology:
        master = topology.master()
        version = master.info("server").get("redis_version", "unknown")
        facts = machine_facts(f"{version} ({topology.backend_impl.describe()})")
        server = Server(master.port)
        steps: dict[str, Callable[[], dict[str, Any]]] = {
            "uncontended": lambda: bench_uncontended.run(
                server, blocks=3 if quick else 9, turns=5 if quick else 25
            ),
            "handoff": lambda: bench_handoff.run(server, count=20 if quick else 220),
            "contended": lambda: bench_contended.run(server, window=0.3 if quick else 2.0),
            "queued": lambda: {
                "handoff_rtt": bench_handoff.run_rtt(
                    server, count=10 if quick else 60, warmup=2 if quick else 5
                ),
                "contended_rtt": bench_contended.run_rtt(server, window=0.3 if quick else 2.0),
            },
            "asyncio_contended": lambda: bench_asyncio_contended.run(
                server, rounds=2 if quick else 3, window=0.3 if quick else 2.0
            ),
            "watchdog": lambda: _watchdog(server, quick),
            "memory": lambda: bench_memory.run(server, cycles=cycles),
        }
        for name in ("uncontended", "handoff", "contended", "queued", "asyncio_contended"):
            if name in chosen:
                results[name] = _timed(name, steps[name])
        if "redlock" in chosen:
            with start_topology("redlock", backend="process") as masters:
                servers = [Server(node.port) for node in masters.data_nodes]
                results["redlock"] = _timed(
                    "redlock",
                    lambda: {
                        **bench_redlock.run(servers, blocks=3 if quick else 7),
                        "rtt": bench_redlock.run_rtt(servers, blocks=2 if quick else 5),
                    },
                )
        if "cluster" in chosen:
            with start_topology("cluster", backend="process") as cluster:
                yaml = cluster.redisson_yaml()
                results["cluster"] = _timed(
                    "cluster",
                    lambda: bench_cluster.run(
                        yaml, rounds=2 if quick else 3, window=0.3 if quick else 1.5
                    ),
                )
        for name in ("watchdog", "memory"):
            if name in chosen:
                results[name] = _timed(name, steps[name])

    document: dict[str, Any] = {
        "command": command,
        "machine": facts,
        "seconds": time.monotonic() - started,
        "results": results,
    }
    print(_publish(out, document), flush=True)
    if document["seconds"] > BUDGET_SECONDS:
        _log(f"note: the run took {document['seconds']:.0f} s, over the {BUDGET_SECONDS} s budget")
    return 0
