"""``redisson-py lock status|list|unlock|run``: look at, find, free and hold locks from a
shell.

The config comes from ``--config FILE`` or the file ``$REDISSON_PY_CONFIG`` names. Every
command goes through the library's own client, so keys are read on the node the library
routes them to.

``status NAME...``: per name, the kind of object its data shows (see
`redisson_py.cli.lock_data`: ``reentrant``, ``fair``, ``read-write``, ``fenced``,
``semaphore or count-down latch``, ``permit-expirable semaphore``, ``fenced resource``;
``not locked`` when no key exists, ``other`` naming the Redis type otherwise), the
holders with hold counts (a read-write lock's mode and each holder's), the TTL, the
waiters, and what the kind adds: a fair lock's queue in order with each waiter's
timeout, a fenced lock's current token, a semaphore's or latch's value, a
permit-expirable semaphore's available and acquired permits with their expiries, a
fenced resource's fence record (highest token and owner). Where the data allows several
kinds (a spin, non-reentrant or idle fair lock has the reentrant lock's layout; a
semaphore and a latch are one integer) it says "cannot tell" and names them, with the
evidence it used (`redisson_py.cli.lock_data.recognise`). Waiters are a fair lock's
queue (exact); else the clients subscribed to the kind's channel (``PUBSUB NUMSUB``, or
``SHARDNUMSUB`` with sharded pub/sub; unknown (null) on a cluster with classic pub/sub,
whose subscriptions may sit on any node): a client waiting in several threads subscribes
once, so this counts clients. ``--json``: ``{"locks": [entry...]}``, each entry as
`lock_status` documents (``{"name", "kind", "type",
"node", "holders": [{"field", "client_id", "owner_id", "count"}], "ttl_ms", "waiters"}``
as before, plus ``locked``, ``mode``, ``queue``, ``token``, ``value``, ``permits``,
``fence``, ``kinds``, ``evidence`` and each holder's ``mode``).

``list [PATTERN]``: every lock-like object on every master whose name matches the glob
PATTERN, each with the entry ``status`` gives (`redisson_py.cli.lock_list`); ``--json``:
``{"locks": [entry...], "masters", "keys_scanned", "seconds"}``.

``unlock --force NAME``: frees the lock whoever holds it and wakes its waiters, as its
kind's own force unlock does (`force_unlock`); a name that holds no lock (a
semaphore, a latch, a fenced resource, another Redis type) is refused with exit 2 and
left alone. Asks on the terminal unless ``--yes``; with no terminal and no ``--yes`` it
refuses (exit 2). ``--json``: ``{"name", "unlocked", "kind"}`` (false: it was not
locked).

``run NAME [--wait S] [--lease S] -- CMD ARGS...``: like flock(1). Takes the lock
(waiting for ever, or up to ``--wait`` seconds), runs CMD while holding it (the watchdog
renews it; with ``--lease`` it is held for that long at most), forwards SIGINT/SIGTERM to
CMD, releases the lock when CMD ends and exits with CMD's status (128+N when killed by
signal N). If the lock is lost while CMD runs, CMD gets SIGTERM, then SIGKILL after
``--grace`` seconds. ``--json`` writes ``{"name", "acquired", "lost", "status"}`` to stderr
at the end (stdout is CMD's).

Exit statuses of ``run`` besides CMD's own: 75 (`EXIT_WAIT_TIMEOUT`) the lock was
not had within ``--wait``; 76 (`EXIT_LOCK_LOST`) the lock was lost while CMD ran;
126/127 CMD could not be run / was not found; 1 another error; 2 bad usage.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import subprocess
import sys
import threading
import types
from typing import Any

from redisson_py import LockLost
from redisson_py.cli.common import add_common_options, emit_json, load_config
from redisson_py.cli.lock_data import (
    FAIR_KIND,
    FENCED_KIND,
    LOCK_KINDS,
    NOT_LOCKED,
    OTHER,
    READ_WRITE_KIND,
    REENTRANT_KIND,
    KeyNames,
    format_status,
    lock_status,
)
from redisson_py.cli.lock_list import format_list, list_locks
from redisson_py.core import keyspace
from redisson_py.errors import RedissonError
from redisson_py.sync.client import Redisson

__all__ = ["EXIT_LOCK_LOST", "EXIT_WAIT_TIMEOUT", "force_unlock", "lock_status", "register"]

EXIT_USAGE = 2
EXIT_WAIT_TIMEOUT = 75
"""``lock run``: the lock was not acquired within ``--wait`` (EX_TEMPFAIL)."""
EXIT_LOCK_LOST = 76
"""``lock run``: the lock was lost while the command ran; the command was stopped."""
EXIT_CANNOT_EXECUTE = 126
EXIT_NOT_FOUND = 127
DEFAULT_GRACE = 5.0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``lock`` to the ``redisson-py`` parser."""
    parser = subparsers.add_parser(
        "lock",
        help="show, force-unlock, or hold a lock around a command",
        description="Operator commands for locks. The config comes from --config FILE or "
        "the file $REDISSON_PY_CONFIG names.",
    )
    # --config is read before the lock command too (`lock --config FILE list`), as the
    # description's wording invites; after it, it wins
    parser.add_argument(
        "--config",
        dest="lock_config",
        metavar="FILE",
        default=None,
        help="a Redisson YAML config (default: the file $REDISSON_PY_CONFIG names)",
    )
    commands = parser.add_subparsers(title="lock commands", metavar="COMMAND")

    status = commands.add_parser(
        "status",
        help="kind, holders, TTL and waiters of locks (and semaphores, latches)",
        description="Show each name's kind (told from its data), holders with hold "
        "counts, TTL and waiters, and what the kind adds: a fair lock's queue, a read-write "
        "lock's mode, a fenced lock's token, a semaphore's permits, a fence record.",
    )
    status.add_argument("names", metavar="NAME", nargs="+", help="lock (or object) names")
    add_common_options(status)
    status.set_defaults(handler=run_status)

    listing = commands.add_parser(
        "list",
        help="find locks (and semaphores, latches) by SCANning every master",
        description="SCAN every master for locks, semaphores, latches and fenced resources "
        "whose name matches PATTERN (a glob on the name; default: all) and show each "
        "one's kind (told from its data, or 'cannot tell' with the candidates), holders, "
        "TTL and waiters. Costs one SCAN round trip per 1000 keys, plus two per page "
        "holding candidates.",
    )
    listing.add_argument("pattern", metavar="PATTERN", nargs="?", default=None)
    add_common_options(listing)
    listing.set_defaults(handler=run_list)

    unlock = commands.add_parser(
        "unlock",
        help="free a lock whoever holds it (needs --force)",
        description="Free a lock whoever holds it and wake its waiters, as its kind's force "
        "unlock does (a fair lock keeps its queue). Refuses (exit 2) a name that holds no "
        "lock, such as a semaphore or a latch. Requires --force; asks for confirmation on "
        "the terminal unless --yes.",
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


def _config_path(args: argparse.Namespace) -> str | None:
    """``--config`` given after the lock command, else before it (``lock --config FILE``)."""
    after: str | None = args.config
    before: str | None = getattr(args, "lock_config", None)
    return after or before


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help(sys.stderr)
    return EXIT_USAGE


def _refuse(message: str) -> int:
    print(f"redisson-py: error: {message}", file=sys.stderr, flush=True)
    return EXIT_USAGE


# -- status ----------------------------------------------------------------------------------


def run_status(args: argparse.Namespace) -> int:
    """Print the status of each named object; exit 0."""
    config = load_config(_config_path(args))
    with Redisson.create(config) as client:
        entries = [lock_status(client, name) for name in args.names]
    if args.json:
        emit_json({"locks": entries})
    else:
        print("\n".join(format_status(e) for e in entries), flush=True)
    return 0


# -- list ------------------------------------------------------------------------------------


def run_list(args: argparse.Namespace) -> int:
    """List the lock-like objects on every master; exit 0 (1 with an error naming the
    node that could not be read)."""
    config = load_config(_config_path(args))
    with Redisson.create(config) as client:
        result = list_locks(client, args.pattern)
    if args.json:
        emit_json(result.as_json())
    else:
        print(format_list(result), flush=True)
    return 0


# -- unlock ----------------------------------------------------------------------------------


def run_unlock(args: argparse.Namespace) -> int:
    """Force-unlock one lock after confirmation; see the module docstring."""
    if not args.force:
        return _refuse(f"'lock unlock' breaks whoever holds {args.name!r}: pass --force to do it")
    if not args.yes and not sys.stdin.isatty():
        return _refuse("no terminal to confirm on: pass --yes to force-unlock without asking")
    config = load_config(_config_path(args))
    with Redisson.create(config) as client:
        entry = lock_status(client, args.name)
        kind = entry["kind"]
        if kind not in LOCK_KINDS and kind != NOT_LOCKED:
            what = f"a Redis {entry['type']}" if kind == OTHER else f"a {kind}"
            return _refuse(
                f"{args.name!r} is {what}, not a lock: 'lock unlock' frees locks only "
                "and left it as it is"
            )
        if not args.yes:
            print(
                f"Force-unlock {args.name!r} ({kind}), whoever holds it? [y/N] ",
                end="",
                flush=True,
                file=sys.stderr,
            )
            answer = sys.stdin.readline().strip().lower()
            if answer not in ("y", "yes"):
                print("redisson-py: not unlocked", file=sys.stderr, flush=True)
                return 1
        unlocked = force_unlock(client, args.name, kind)
    if args.json:
        emit_json({"name": args.name, "unlocked": unlocked, "kind": kind})
    elif unlocked:
        print(f"{args.name}: unlocked ({kind} lock)", flush=True)
    else:
        print(f"{args.name}: was not locked", flush=True)
    return 0


def force_unlock(client: Any, name: str, kind: str) -> bool:
    """Free lock ``name`` of ``kind`` (one of `LOCK_KINDS`, from its data) whoever
    holds it, through the library's class for that kind; True if it was held.

    - ``reentrant``, ``fenced``: the hash is deleted and one waiter per client woken
      (``0`` on the lock's channel); a fenced lock's token counter stays, so the next
      holder's token is still larger.
    - ``fair``: the hash is deleted, waiters whose timeout passed leave the queue and
      the head waiter is woken on its own channel; the queue stays, in order.
    - ``read-write``: the hash is deleted, whichever its mode, with the timeout keys of
      the read holds it counts and redisson-py's acquire-latch hash, and every waiter is
      woken (``1`` on ``redisson_rwlock:{name}``: readers may all enter).
    - ``not locked``: nothing is done (False): a lock taken since the look is left alone.
    """
    if kind == FAIR_KIND:
        return bool(client.get_fair_lock(name).force_unlock())
    if kind == FENCED_KIND:
        return bool(client.get_fenced_lock(name).force_unlock())
    if kind == READ_WRITE_KIND:
        return _force_unlock_read_write(client, name)
    if kind == REENTRANT_KIND:
        return bool(client.get_lock(name).force_unlock())
    return False


def _force_unlock_read_write(client: Any, name: str) -> bool:
    """`force_unlock` of a read-write lock, in either mode."""
    pair = client.get_read_write_lock(name)
    if pair.write_lock().force_unlock():  # publishes 1 itself
        return True
    if not pair.read_lock().force_unlock():  # publishes 0: wakes one waiter per client
        return False
    # Readers may all enter: tell every waiter, as a write unlock does.
    manager = client.connection_manager
    channel = KeyNames.of(name, by_slot=manager.routes_by_slot).read_write_channel
    client.redis(name).execute_command(
        manager.publish_command.upper(), channel, keyspace.WRITE_UNLOCK_MESSAGE
    )
    return True


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
    config = load_config(_config_path(args))
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
