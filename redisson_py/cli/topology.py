"""``redisson-py topology``: start, list and stop local Redis topologies.

``up KIND`` starts a topology, prints its Redisson client config (YAML, on stdout,
flushed at once, so it can be piped or redirected) and stays up until SIGINT or SIGTERM,
then tears it down. With ``--detach`` it returns instead and leaves the topology running;
``down`` stops detached topologies and ``list`` shows them.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from datetime import datetime
from types import FrameType
from typing import Any

import yaml

from redisson_py.testing.errors import TopologyError

__all__ = ["register", "run_down", "run_list", "run_up"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``topology`` and its subcommands to the ``redisson-py`` parser."""
    topology = subparsers.add_parser(
        "topology",
        help="start and stop local Redis topologies for tests and demos",
        description="Start, list and stop local Redis topologies (all on 127.0.0.1). "
        "`up KIND` prints the topology's Redisson client config (YAML) on stdout and stays "
        "up until Ctrl-C or SIGTERM; with --detach it leaves the topology running for "
        "`down` to stop.",
    )
    commands = topology.add_subparsers(title="topology commands", metavar="COMMAND")

    up = commands.add_parser(
        "up",
        help="start a topology, print its Redisson YAML, stay up until Ctrl-C/SIGTERM",
    )
    up.add_argument(
        "kind",
        metavar="KIND",
        help="single, master-replica, replicated, sentinel, cluster, redlock, or a spec file",
    )
    up.add_argument(
        "--backend",
        choices=("container", "process", "auto"),
        # The same variable as the pytest plugin's --redis-backend default, so tests that
        # run the CLI (the README examples) start what the test run asked for.
        default=os.environ.get("REDISSON_PY_REDIS_BACKEND", "auto"),
        help="containers, local redis-server processes, or auto (containers when a "
        "Docker engine answers); default: $REDISSON_PY_REDIS_BACKEND, else auto",
    )
    up.add_argument(
        "--detach",
        action="store_true",
        help="leave the topology running and return; stop it with `topology down`",
    )
    up.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override a spec field, e.g. replicas_per_master=1 or "
        "sentinel.down_after_ms=2000 or redis_conf.maxmemory=64mb (repeatable)",
    )
    up.add_argument(
        "--base-port",
        type=int,
        default=None,
        help="use consecutive ports from here (data nodes first, then sentinels); "
        "default: free ports drawn at random from 11000-21999",
    )
    secure = up.add_argument_group(
        "security",
        "protect the data nodes; the YAML refers to the password as "
        "${REDISSON_PY_TOPOLOGY_PASSWORD}, and the command says which file exports it",
    )
    secure.add_argument("--auth", action="store_true", help="requirepass (a random password)")
    secure.add_argument(
        "--acl",
        action="store_true",
        help="an ACL user 'redisson-py' with a random password; the default user off",
    )
    secure.add_argument(
        "--tls",
        action="store_true",
        help="TLS only, with a throwaway CA (the YAML's sslTruststore names its file)",
    )
    up.add_argument(
        "--timeout", type=float, default=60.0, help="seconds to wait for the topology (60)"
    )
    up.set_defaults(handler=run_up)

    down = commands.add_parser("down", help="stop detached topologies")
    down.add_argument(
        "kind", metavar="KIND", nargs="?", help="stop the detached topologies of this kind"
    )
    down.add_argument("--all", action="store_true", help="stop every detached topology")
    down.set_defaults(handler=run_down)

    listing = commands.add_parser("list", help="list detached topologies")
    listing.set_defaults(handler=run_list)

    topology.set_defaults(handler=lambda args: _usage(topology))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return 2


def parse_overrides(items: list[str]) -> dict[str, Any]:
    """``["sentinel.quorum=1", "replicas_per_master=1"]`` as nested overrides.

    Values are read as YAML scalars (``1`` is a number, ``yes`` a boolean). Raises
    [`TopologyError`][redisson_py.testing.TopologyError] for an item without ``=``.
    """
    overrides: dict[str, Any] = {}
    for item in items:
        field, sep, raw = item.partition("=")
        if not sep or not field.strip():
            raise TopologyError(
                f"--set {item!r} is not FIELD=VALUE; write e.g. --set replicas_per_master=1."
            )
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw
        target = overrides
        *parents, leaf = field.strip().split(".", 1)
        for parent in parents:
            existing = target.setdefault(parent, {})
            if not isinstance(existing, dict):
                raise TopologyError(f"--set {item!r} conflicts with an earlier --set {parent}=...")
            target = existing
        target[leaf] = value
    return overrides


def run_up(args: argparse.Namespace) -> int:
    """``topology up``: see the module docstring."""
    from redisson_py.testing.topologies.bootstrap import start_topology  # noqa: PLC0415

    overrides = parse_overrides(args.overrides)
    security = {k: True for k in ("auth", "acl", "tls") if getattr(args, k, False)}
    if security:
        overrides["security"] = {**overrides.get("security", {}), **security}
    started = time.monotonic()
    topology = start_topology(
        args.kind,
        backend=args.backend,
        detached=args.detach,
        base_port=args.base_port,
        timeout=args.timeout,
        **overrides,
    )
    try:
        yaml_text = topology.redisson_yaml()
        # Handlers first: whoever reads the YAML may signal at once.
        stop = None if args.detach else _install_stop_handlers()
        if args.detach:
            (topology.directory / "redisson.yaml").write_text(yaml_text)
            topology.save_state()
        sys.stdout.write(yaml_text)
        sys.stdout.flush()
        _describe(topology, time.monotonic() - started)
        if topology.environment():
            env_file = topology.directory / "secrets.env"
            print(
                f"the YAML reads its password from ${{{next(iter(topology.environment()))}}}:"
                f" run `. {env_file}` first (the file is readable by you only)",
                file=sys.stderr,
                flush=True,
            )
        if args.detach:
            print(
                f"detached: stop it with `redisson-py topology down {topology.kind}`; "
                f"config also in {topology.directory / 'redisson.yaml'}",
                file=sys.stderr,
                flush=True,
            )
            return 0
        assert stop is not None
        _wait_for_stop_signal(stop)
        print(f"stopping {topology.kind} topology {topology.id}", file=sys.stderr, flush=True)
    except BaseException:
        if not args.detach:
            topology.stop()
        raise
    topology.stop()
    return 0


def _describe(topology: Any, seconds: float) -> None:
    nodes = ", ".join(f"{n.name} {n.host}:{n.port}" for n in topology.nodes)
    print(
        f"{topology.kind} topology {topology.id} up in {seconds:.1f} s on the "
        f"{topology.backend} backend ({topology.backend_impl.describe()}): {nodes}",
        file=sys.stderr,
        flush=True,
    )
    if not topology.detached:
        print("press Ctrl-C (or send SIGTERM) to stop it", file=sys.stderr, flush=True)


def _install_stop_handlers() -> threading.Event:
    """Make SIGINT, SIGTERM and SIGHUP set the returned event instead of ending us."""
    stop = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, handler)
    return stop


def _wait_for_stop_signal(stop: threading.Event) -> None:
    # A timed wait keeps the main thread returning to the interpreter, where the handlers
    # run.
    while not stop.wait(0.5):
        pass
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def _detached_states() -> list[tuple[Any, dict[str, Any]]]:
    from redisson_py.testing.topologies.state import iter_states  # noqa: PLC0415

    return [(d, s) for d, s in iter_states() if s.get("detached")]


def run_down(args: argparse.Namespace) -> int:
    """``topology down [KIND|--all]``: stop detached topologies."""
    from redisson_py.testing.topologies.state import remove_state_dir, stop_from_state  # noqa: PLC0415

    states = _detached_states()
    if args.kind and args.all:
        raise TopologyError("give either KIND or --all to `topology down`, not both.")
    if args.kind:
        chosen = [
            (d, s) for d, s in states if s.get("kind") == args.kind or s.get("id") == args.kind
        ]
        if not chosen:
            print(f"no detached {args.kind} topology is running.", file=sys.stderr)
            return 0
    elif args.all or len(states) <= 1:
        chosen = states
        if not chosen:
            print("no detached topology is running.", file=sys.stderr)
            return 0
    else:
        kinds = ", ".join(sorted(f"{s.get('kind')} ({s.get('id')})" for _, s in states))
        raise TopologyError(
            f"several detached topologies are running ({kinds}); name one or use --all."
        )
    for directory, state in chosen:
        stopped = stop_from_state(state)
        remove_state_dir(directory)
        print(
            f"stopped {state.get('kind')} topology {state.get('id')} "
            f"({len(stopped)} node(s), {state.get('backend')})"
        )
    return 0


def run_list(args: argparse.Namespace) -> int:
    """``topology list``: one line per detached topology."""
    states = _detached_states()
    if not states:
        print("no detached topology is running.", file=sys.stderr)
        return 0
    for directory, state in states:
        created = datetime.fromtimestamp(float(state.get("created", 0))).strftime("%H:%M:%S")
        ports = ",".join(str(n.get("port")) for n in state.get("nodes", []))
        print(
            f"{state.get('id')}\t{state.get('kind')}\t{state.get('backend')}\tsince {created}"
            f"\tports {ports}\tconfig {directory / 'redisson.yaml'}"
        )
    return 0
