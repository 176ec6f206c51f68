"""Client A of the partition scenarios: a lock holder in a process of its own.

Started by :class:`redisson_py.chaos.partition_sides.RemoteHolder` through
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
  otherwise than by :class:`~redisson_py.StaleTokenError`);
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
import redisson_py.asyncio as aio
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


def run_sync(args: argparse.Namespace, configs: Sequence[Config]) -> int:
    reporter = _Reporter()
    clients = [redisson_py.Redisson.create(c, on_lock_lost=reporter) for c in configs]
    lock: Any
    if len(clients) > 1:
        lock = redisson_py.RedLock.for_name(args.lock, clients, on_lock_lost=reporter)
    elif args.fenced:
        lock = clients[0].get_fenced_lock(args.lock)
    else:
        lock = clients[0].get_lock(args.lock)
    try:
        if args.fenced:
            token = lock.try_lock_and_get_token(args.wait)
            held, fence = token is not None, lock.fence() if token is not None else None
        else:
            held, fence, token = lock.try_lock(args.wait), None, None
        if not held:
            say("error", error=f"{args.lock} not taken within {args.wait:g} s")
            return 1
        say("held", token=token)
        for line in sys.stdin:
            command, _, argument = line.strip().partition(" ")
            if command == "exit":
                break
            if command == "check":
                try:
                    say("check", held=lock.is_held_by_current_thread())
                except Exception as error:  # a client that asks Redis may not reach it
                    say("check", held=None, error=repr(error))
            elif command == "unlock":
                try:
                    lock.unlock()
                    say("unlock", raised="")
                except Exception as error:
                    say("unlock", raised=_raised(error), message=str(error))
            elif command == "write" and fence is not None:
                say("write", **_write_sync(args.store, argument, fence))
        return 0
    finally:
        for client in clients:
            client.shutdown()


def _write_sync(store: str, resource: str, fence: redisson_py.Fence) -> dict[str, Any]:
    try:
        with redisson_py.Redisson.create(Config.from_yaml(store)) as client:
            client.get_fenced_resource(resource).set("A", fence)
        return {"accepted": True, "error": ""}
    except StaleTokenError:
        return {"accepted": False, "error": ""}
    except Exception as error:  # the resource's server is reachable from both sides
        return {"accepted": None, "error": repr(error)}


async def run_asyncio(args: argparse.Namespace, configs: Sequence[Config]) -> int:
    reporter = _Reporter()
    clients = [await aio.Redisson.create(c, on_lock_lost=reporter) for c in configs]
    loop = asyncio.get_running_loop()
    lock: Any
    if len(clients) > 1:
        lock = aio.RedLock.for_name(args.lock, clients, on_lock_lost=reporter)
    elif args.fenced:
        lock = clients[0].get_fenced_lock(args.lock)
    else:
        lock = clients[0].get_lock(args.lock)
    try:
        if args.fenced:
            token = await lock.try_lock_and_get_token(args.wait)
            held, fence = token is not None, await lock.fence() if token is not None else None
        else:
            held, fence, token = await lock.try_lock(args.wait), None, None
        if not held:
            say("error", error=f"{args.lock} not taken within {args.wait:g} s")
            return 1
        say("held", token=token)
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            command, _, argument = line.strip().partition(" ")
            if command == "exit":
                break
            if command == "check":
                try:
                    # A RedLock answers from memory (plain call), a lock is awaited.
                    answer = lock.is_held_by_current_task()
                    say("check", held=await answer if inspect.isawaitable(answer) else answer)
                except Exception as error:  # a client that asks Redis may not reach it
                    say("check", held=None, error=repr(error))
            elif command == "unlock":
                try:
                    await lock.unlock()
                    say("unlock", raised="")
                except Exception as error:
                    say("unlock", raised=_raised(error), message=str(error))
            elif command == "write" and fence is not None:
                say("write", **await _write_async(args.store, argument, fence))
        return 0
    finally:
        for client in clients:
            await client.shutdown()


async def _write_async(store: str, resource: str, fence: aio.Fence) -> dict[str, Any]:
    try:
        client = await aio.Redisson.create(Config.from_yaml(store))
        try:
            await client.get_fenced_resource(resource).set("A", fence)
        finally:
            await client.shutdown()
        return {"accepted": True, "error": ""}
    except StaleTokenError:
        return {"accepted": False, "error": ""}
    except Exception as error:
        return {"accepted": None, "error": repr(error)}


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
