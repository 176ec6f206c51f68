"""Client A of the partition scenarios: a lock holder in a process of its own.

Started by `redisson_py.chaos.partition_sides.RemoteHolder` through
``topology.network.popen``, so its connections leave from its client host's address and
a partition cuts it off with its side::

    python -m redisson_py.chaos.partition_holder --config FILE --lock NAME
        [--api sync|asyncio] [--fenced] [--store FILE]

It takes ``NAME`` without a lease (the watchdog renews it): a reentrant lock, a fenced
lock with ``--fenced``, or a RedLock over one client per YAML document when ``FILE`` has
several. Then it answers commands, one per line on stdin, always from the thread (sync)
or task (asyncio) that holds the lock, since that is the owner. Everything it says is
one JSON object per line on stdout, with ``at``: ``time.monotonic()``, one clock for
every process of the machine:

- ``{"event": "held", "token": T}`` once held (``token``: the fenced lock's, else null);
  ``{"event": "error", "error": ...}`` and exit status 1 if it could not be taken;
- ``{"event": "lost", "reason": ...}`` when ``on_lock_lost`` is called (at most once);
- ``check`` -> ``{"event": "check", "held": bool}``: ``is_held_by_current_thread()``
  (``is_held_by_current_task()``); ``held`` null and ``error`` if it raised;
- ``unlock`` -> ``{"event": "unlock", "raised": NAME}``: the exception class ``unlock()``
  raised, ``""`` when it returned;
- ``write RESOURCE`` (``--fenced`` with ``--store``) -> ``{"event": "write", "accepted":
  bool | null, "error": ...}``: the holder's own fence written to the fenced resource
  ``RESOURCE`` on the server ``--store`` names (null and the error when the write failed
  otherwise than by [`StaleTokenError`][redisson_py.errors.StaleTokenError]);
- ``exit`` or end of input: shut down and exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

import redisson_py
import redisson_py.asyncio
from redisson_py import Config, LockLost, StaleTokenError

_print_lock = threading.Lock()


def say(event: str, **fields: Any) -> None:
    """One JSON line on stdout (whole lines only: the watchdog's thread says ``lost``)."""
    line = json.dumps({"event": event, "at": time.monotonic(), **fields})
    with _print_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class _Reporter:
    """The ``on_lock_lost`` callback: says ``lost`` once."""

    def __init__(self) -> None:
        self.told = False

    def __call__(self, event: LockLost) -> None:
        if not self.told:
            self.told = True
            say("lost", reason=event.reason)


def _raised(error: BaseException | None) -> str:
    return "" if error is None else type(error).__name__


def _choose_lock(
    redlock: Any, clients: Sequence[Any], args: argparse.Namespace, reporter: _Reporter
) -> Any:
    """The lock A holds, from either API's clients (``redlock``: that API's RedLock)."""
    if len(clients) > 1:
        return redlock.for_name(args.lock, clients, on_lock_lost=reporter)
    if args.fenced:
        return clients[0].get_fenced_lock(args.lock)
    return clients[0].get_lock(args.lock)


def _command(line: str) -> tuple[str, str]:
    command, _, argument = line.strip().partition(" ")
    return command, argument


def _write_outcome(error: BaseException | None) -> dict[str, Any]:
    """What ``write`` says: accepted, refused as stale, or failed otherwise."""
    if error is None:
        return {"accepted": True, "error": ""}
    if isinstance(error, StaleTokenError):
        return {"accepted": False, "error": ""}
    return {"accepted": None, "error": repr(error)}


def _not_taken(args: argparse.Namespace) -> int:
    say("error", error=f"{args.lock} not taken within {args.wait:g} s")
    return 1


# The two APIs' loops below differ only in awaiting; each is a few lines over the shared
# helpers above (a chaos driver, not library code: not worth a generated twin).


def run_sync(args: argparse.Namespace, configs: Sequence[Config]) -> int:
    reporter = _Reporter()
    clients = [redisson_py.Redisson.create(c, on_lock_lost=reporter) for c in configs]
    lock = _choose_lock(redisson_py.RedLock, clients, args, reporter)
    try:
        token = lock.try_lock_and_get_token(args.wait) if args.fenced else None
        if not (token is not None if args.fenced else lock.try_lock(args.wait)):
            return _not_taken(args)
        fence = lock.fence() if token is not None else None
        say("held", token=token)
        for line in sys.stdin:
            command, argument = _command(line)
            if command == "exit":
                break
            try:
                if command == "check":
                    say("check", held=lock.is_held_by_current_thread())
                elif command == "unlock":
                    lock.unlock()
                    say("unlock", raised="")
                elif command == "write" and fence is not None:
                    say("write", **_write_sync(args.store, argument, fence))
            except Exception as error:  # a client that asks Redis may not reach it
                _say_failed(command, error)
        return 0
    finally:
        for client in clients:
            client.shutdown()


def _say_failed(command: str, error: BaseException) -> None:
    if command == "check":
        say("check", held=None, error=repr(error))
    else:
        say("unlock", raised=_raised(error), message=str(error))


def _write_sync(store: str, resource: str, fence: redisson_py.Fence) -> dict[str, Any]:
    try:
        with redisson_py.Redisson.create(Config.from_yaml(store)) as client:
            client.get_fenced_resource(resource).set("A", fence)
    except Exception as error:  # the resource's server is reachable from both sides
        return _write_outcome(error)
    return _write_outcome(None)


async def run_asyncio(args: argparse.Namespace, configs: Sequence[Config]) -> int:
    reporter = _Reporter()
    clients = [await redisson_py.asyncio.Redisson.create(c, on_lock_lost=reporter) for c in configs]
    loop = asyncio.get_running_loop()
    lock = _choose_lock(redisson_py.asyncio.RedLock, clients, args, reporter)
    try:
        token = await lock.try_lock_and_get_token(args.wait) if args.fenced else None
        if not (token is not None if args.fenced else await lock.try_lock(args.wait)):
            return _not_taken(args)
        fence = await lock.fence() if token is not None else None
        say("held", token=token)
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            command, argument = _command(line)
            if command == "exit":
                break
            try:
                if command == "check":
                    # A RedLock answers from memory (plain call), a lock is awaited.
                    answer = lock.is_held_by_current_task()
                    say("check", held=await answer if inspect.isawaitable(answer) else answer)
                elif command == "unlock":
                    await lock.unlock()
                    say("unlock", raised="")
                elif command == "write" and fence is not None:
                    say("write", **await _write_async(args.store, argument, fence))
            except Exception as error:
                _say_failed(command, error)
        return 0
    finally:
        for client in clients:
            await client.shutdown()


async def _write_async(
    store: str, resource: str, fence: redisson_py.asyncio.Fence
) -> dict[str, Any]:
    try:
        client = await redisson_py.asyncio.Redisson.create(Config.from_yaml(store))
        try:
            await client.get_fenced_resource(resource).set("A", fence)
        finally:
            await client.shutdown()
    except Exception as error:
        return _write_outcome(error)
    return _write_outcome(None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m redisson_py.chaos.partition_holder")
    parser.add_argument("--config", required=True, help="YAML; several documents: a RedLock")
    parser.add_argument("--lock", required=True)
    parser.add_argument("--api", choices=("sync", "asyncio"), default="sync")
    parser.add_argument("--fenced", action="store_true", help="a fenced lock")
    parser.add_argument("--store", default="", help="YAML of the fenced resource's server")
    parser.add_argument("--wait", type=float, default=10.0, help="seconds to take the lock")
    args = parser.parse_args(argv)
    configs = Config.from_yaml_all(args.config)
    if args.api == "asyncio":
        return asyncio.run(run_asyncio(args, configs))
    return run_sync(args, configs)


if __name__ == "__main__":
    raise SystemExit(main())
