"""``redisson-py lock status|unlock|run``: look at, free and hold locks from a shell.

The config comes from ``--config FILE`` or the file ``$REDISSON_PY_CONFIG`` names. Every
command goes through the library's own client, so keys are read on the node the library
routes them to.

``status NAME...``: per lock, its kind (``reentrant`` for Redisson's hash of owner fields
``<client uuid>:<owner id>`` -> hold count, ``not locked`` when the key is absent,
``other`` naming the Redis type otherwise), the holders, the TTL, and the waiters: clients
subscribed to the lock's unlock channel (``PUBSUB NUMSUB``, or ``SHARDNUMSUB`` with sharded
pub/sub; unknown (null) on a cluster with classic pub/sub, whose subscriptions may sit on
any node). A client waiting in several threads subscribes once, so this counts clients.
``--json``: ``{"locks": [{"name", "kind", "type", "node", "holders": [{"field",
"client_id", "owner_id", "count"}], "ttl_ms", "waiters"}]}`` (``ttl_ms`` null: no
expiry or absent).

``unlock --force NAME``: deletes the lock whoever holds it and wakes its waiters. Asks on
the terminal unless ``--yes``; with no terminal and no ``--yes`` it refuses (exit 2).
``--json``: ``{"name", "unlocked"}`` (false: it was not locked).

``run NAME [--wait S] [--lease S] -- CMD ARGS...``: like flock(1). Takes the lock
(waiting for ever, or up to ``--wait`` seconds), runs CMD while holding it (the watchdog
renews it; with ``--lease`` it is held for that long at most), forwards SIGINT/SIGTERM to
CMD, releases the lock when CMD ends and exits with CMD's status (128+N when killed by
signal N). If the lock is lost while CMD runs, CMD gets SIGTERM, then SIGKILL after
``--grace`` seconds. ``--json`` writes ``{"name", "acquired", "lost", "status"}`` to stderr
at the end (stdout is CMD's).

Exit statuses of ``run`` besides CMD's own: 75 (:data:`EXIT_WAIT_TIMEOUT`) the lock was
not had within ``--wait``; 76 (:data:`EXIT_LOCK_LOST`) the lock was lost while CMD ran;
126/127 CMD could not be run / was not found; 1 another error; 2 bad usage.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import signal
import subprocess
import sys
import threading
import types
from typing import Any

from redisson_py.cli.common import add_common_options, emit_json, load_config, text
from redisson_py.config import redact_address
from redisson_py.core.holds import LockLost
from redisson_py.core.lock_kinds import ACQUIRE_LATCH_PREFIX
from redisson_py.core.naming import channel_name
from redisson_py.errors import RedissonError
from redisson_py.sync.client import Redisson

__all__ = ["EXIT_LOCK_LOST", "EXIT_WAIT_TIMEOUT", "lock_status", "register"]

EXIT_USAGE = 2
EXIT_WAIT_TIMEOUT = 75
"""``lock run``: the lock was not acquired within ``--wait`` (EX_TEMPFAIL)."""
EXIT_LOCK_LOST = 76
"""``lock run``: the lock was lost while the command ran; the command was stopped."""
EXIT_CANNOT_EXECUTE = 126
EXIT_NOT_FOUND = 127
DEFAULT_GRACE = 5.0

_OWNER_FIELD = re.compile(r"^[0-9a-fA-F-]{36}:.+$")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lock`` to the ``redisson-py`` parser."""
    parser = subparsers.add_parser(
        "lock",
        help="show, force-unlock, or hold a lock around a command",
        description="Operator commands for locks. The config comes from --config FILE or "
        "the file $REDISSON_PY_CONFIG names.",
    )
    commands = parser.add_subparsers(title="lock commands", metavar="COMMAND")

    status = commands.add_parser(
        "status",
        help="kind, holders, TTL and waiters of locks",
        description="Show each lock's kind, holders with hold counts, TTL and waiters.",
    )
    status.add_argument("names", metavar="NAME", nargs="+", help="lock names")
    add_common_options(status)
    status.set_defaults(handler=run_status)

    unlock = commands.add_parser(
        "unlock",
        help="free a lock whoever holds it (needs --force)",
        description="Delete a lock whoever holds it and wake its waiters. Requires --force; "
        "asks for confirmation on the terminal unless --yes.",
    )
    unlock.add_argument("name", metavar="NAME", help="the lock name")
    unlock.add_argument("--force", action="store_true", help="required: this breaks a hold")
    unlock.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    add_common_options(unlock)
    unlock.set_defaults(handler=run_unlock)

    run = commands.add_parser(
        "run",
        help="run a command while holding a lock (like flock(1))",
        description="Take the lock, run CMD while holding it, release it, and exit with "
        f"CMD's status. {EXIT_WAIT_TIMEOUT}: not acquired within --wait; "
        f"{EXIT_LOCK_LOST}: lock lost while CMD ran (CMD was stopped).",
    )
    run.add_argument("name", metavar="NAME", help="the lock name")
    _add_run_options(run)
    add_common_options(run)
    run.add_argument(
        "command",
        metavar="CMD",
        nargs=argparse.REMAINDER,
        help="the command and its arguments, after --",
    )
    run.set_defaults(handler=run_run)

    parser.set_defaults(handler=lambda _args: _usage(parser))


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wait",
        metavar="S",
        type=float,
        default=None,
        help=f"give up after S seconds (exit {EXIT_WAIT_TIMEOUT}); default: wait for ever",
    )
    parser.add_argument(
        "--lease",
        metavar="S",
        type=float,
        default=None,
        help="hold for at most S seconds instead of renewing with the watchdog",
    )
    parser.add_argument(
        "--grace",
        metavar="S",
        type=float,
        default=DEFAULT_GRACE,
        help=f"after a lost lock, seconds between SIGTERM and SIGKILL (default: {DEFAULT_GRACE:g})",
    )


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _refuse(message: str) -> int:
    print(f"redisson-py: error: {message}", file=sys.stderr, flush=True)
    return EXIT_USAGE


# -- status ----------------------------------------------------------------------------------


def lock_status(client: Any, name: str) -> dict[str, Any]:
    """What Redis says about lock ``name``, read through ``client`` (a sync Redisson)."""
    manager = client.connection_manager
    node = manager.view.master_for(name)
    redis_client = client.redis(name)
    kind_of_key = text(redis_client.type(name))
    entry: dict[str, Any] = {
        "name": name,
        "kind": "not locked",
        "type": None if kind_of_key == "none" else kind_of_key,
        "node": None if node is None else redact_address(str(node)),
        "holders": [],
        "ttl_ms": None,
        "waiters": _waiters(manager, redis_client, name),
    }
    if kind_of_key == "none":
        return entry
    ttl = int(redis_client.pttl(name))
    entry["ttl_ms"] = ttl if ttl >= 0 else None
    if kind_of_key != "hash":
        entry["kind"] = "other"
        return entry
    fields = {text(k): text(v) for k, v in redis_client.hgetall(name).items()}
    # redisson-py's per-owner acquire-request fields ride along with the owner fields
    fields = {k: v for k, v in fields.items() if not k.startswith(ACQUIRE_LATCH_PREFIX)}
    if not fields or not all(_OWNER_FIELD.match(f) and v.isdigit() for f, v in fields.items()):
        entry["kind"] = "other"
        return entry
    entry["kind"] = "reentrant"
    for field, count in sorted(fields.items()):
        client_id, _, owner_id = field.partition(":")
        entry["holders"].append(
            {"field": field, "client_id": client_id, "owner_id": owner_id, "count": int(count)}
        )
    return entry


def _waiters(manager: Any, redis_client: Any, name: str) -> int | None:
    channel = channel_name(name, by_slot=manager.routes_by_slot)
    if manager.publish_command == "spublish":
        reply = redis_client.execute_command("PUBSUB", "SHARDNUMSUB", channel)
    elif manager.routes_by_slot:
        return None  # classic pub/sub on a cluster: subscribers may be on any node
    else:
        reply = redis_client.execute_command("PUBSUB", "NUMSUB", channel)
    # [channel, count] (redis-py may already have paired it up)
    if isinstance(reply, list) and reply and isinstance(reply[0], tuple):
        return int(reply[0][1])
    return int(reply[1]) if isinstance(reply, list) and len(reply) >= 2 else None


def _format_status(entry: dict[str, Any]) -> str:
    name = entry["name"]
    if entry["kind"] == "not locked":
        line = f"{name}: not locked"
    elif entry["kind"] == "other":
        line = f"{name}: not a lock (a Redis {entry['type']})"
    else:
        line = f"{name}: reentrant lock"
    lines = [line]
    for holder in entry["holders"]:
        lines.append(
            f"  holder {holder['client_id']} owner {holder['owner_id']}: "
            f"hold count {holder['count']}"
        )
    if entry["kind"] != "not locked":
        ttl = entry["ttl_ms"]
        lines.append(f"  ttl: {'none' if ttl is None else f'{ttl / 1000:.3f} s'}")
    waiters = entry["waiters"]
    lines.append(f"  waiters: {'unknown' if waiters is None else waiters}")
    if entry["node"]:
        lines.append(f"  node: {entry['node']}")
    return "\n".join(lines)


def run_status(args: argparse.Namespace) -> int:
    """Print the status of each named lock; exit 0."""
    config = load_config(args.config)
    with Redisson.create(config) as client:
        entries = [lock_status(client, name) for name in args.names]
    if args.json:
        emit_json({"locks": entries})
    else:
        print("\n".join(_format_status(e) for e in entries), flush=True)
    return 0


# -- unlock ----------------------------------------------------------------------------------


def run_unlock(args: argparse.Namespace) -> int:
    """Force-unlock one lock after confirmation; see the module docstring."""
    if not args.force:
        return _refuse(f"'lock unlock' breaks whoever holds {args.name!r}: pass --force to do it")
    if not args.yes:
        if not sys.stdin.isatty():
            return _refuse("no terminal to confirm on: pass --yes to force-unlock without asking")
        print(
            f"Force-unlock {args.name!r}, whoever holds it? [y/N] ",
            end="",
            flush=True,
            file=sys.stderr,
        )
        answer = sys.stdin.readline().strip().lower()
        if answer not in ("y", "yes"):
            print("redisson-py: not unlocked", file=sys.stderr, flush=True)
            return 1
    config = load_config(args.config)
    with Redisson.create(config) as client:
        unlocked = bool(client.get_lock(args.name).force_unlock())
    if args.json:
        emit_json({"name": args.name, "unlocked": unlocked})
    else:
        print(f"{args.name}: {'unlocked' if unlocked else 'was not locked'}", flush=True)
    return 0


# -- run -------------------------------------------------------------------------------------


class _Runner:
    """The child process and what happens to it when the lock is lost or a signal comes."""

    def __init__(self, grace: float):
        self.grace = grace
        self.child: subprocess.Popen[bytes] | None = None
        self.lost = threading.Event()
        self._guard = threading.Lock()

    def on_lost(self, event: LockLost) -> None:
        """Watchdog thread: the lock is gone; stop the child (TERM, then KILL)."""
        print(
            f"redisson-py: lock {event.name!r} lost ({event.reason}); stopping the command",
            file=sys.stderr,
            flush=True,
        )
        self.lost.set()
        with self._guard:
            child = self.child
        if child is None:
            return
        _signal_child(child, signal.SIGTERM)
        timer = threading.Timer(self.grace, _signal_child, (child, signal.SIGKILL))
        timer.daemon = True
        timer.start()

    def forward(self, signum: int, _frame: types.FrameType | None) -> None:
        """Main thread: pass SIGINT/SIGTERM on to the child."""
        if self.child is None:
            raise KeyboardInterrupt  # still waiting for the lock: give up
        # A Ctrl-C at a terminal already reached the child (same process group).
        if signum == signal.SIGINT and sys.stdin.isatty():
            return
        _signal_child(self.child, signal.Signals(signum))


def _signal_child(child: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    if child.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            child.send_signal(sig)


def _shell_status(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def run_run(args: argparse.Namespace) -> int:
    """Hold the lock around the command; see the module docstring for exit statuses."""
    command = list(args.command)
    if "--" in command:
        # argparse hands everything after NAME to CMD: options between NAME and -- are ours
        split = command.index("--")
        options, command = command[:split], command[split + 1 :]
        if options:
            late = argparse.ArgumentParser(prog="redisson-py lock run NAME")
            _add_run_options(late)
            add_common_options(late)
            given = late.parse_args(options)
            for key, value in vars(given).items():
                if value != late.get_default(key):  # keep what came before NAME
                    setattr(args, key, value)
    if not command:
        return _refuse("'lock run' needs a command after --")
    if args.wait is not None and args.wait < 0:
        return _refuse("--wait must be at least 0")
    runner = _Runner(args.grace)
    config = load_config(args.config)
    report: dict[str, Any] = {"name": args.name, "acquired": False, "lost": False, "status": None}
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for sig in previous:
        signal.signal(sig, runner.forward)
    try:
        with Redisson.create(config, on_lock_lost=runner.on_lost) as client:
            status = _hold_and_run(client, args, command, runner, report)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    report["status"] = status
    if args.json:
        print(json.dumps(report, sort_keys=True), file=sys.stderr, flush=True)
    return status


def _hold_and_run(
    client: Any,
    args: argparse.Namespace,
    command: list[str],
    runner: _Runner,
    report: dict[str, Any],
) -> int:
    lock = client.get_lock(args.name)
    if args.wait is None:
        lock.lock(args.lease)
    elif not lock.try_lock(args.wait, args.lease):
        print(
            f"redisson-py: lock {args.name!r} not acquired within {args.wait:g} s",
            file=sys.stderr,
            flush=True,
        )
        return EXIT_WAIT_TIMEOUT
    report["acquired"] = True
    try:
        try:
            child = subprocess.Popen(command)
        except FileNotFoundError:
            print(f"redisson-py: error: command not found: {command[0]}", file=sys.stderr)
            return EXIT_NOT_FOUND
        except OSError as exc:
            print(f"redisson-py: error: cannot run {command[0]}: {exc.strerror}", file=sys.stderr)
            return EXIT_CANNOT_EXECUTE
        with runner._guard:
            runner.child = child
        if runner.lost.is_set():  # lost between the grant and the start
            runner.on_lost(LockLost(args.name, "", "lost before the command started"))
        returncode = child.wait()
    finally:
        if not runner.lost.is_set():
            try:
                lock.unlock()
            except RedissonError as exc:  # e.g. lost at the last moment: it is not held
                print(
                    f"redisson-py: warning: releasing {args.name!r}: {exc}",
                    file=sys.stderr,
                    flush=True,
                )
    if runner.lost.is_set():
        report["lost"] = True
        return EXIT_LOCK_LOST
    return _shell_status(returncode)
