"""Lock owners for tests: run calls as one thread (sync API) or one asyncio task.

A lock is owned by a thread in the sync API and by a task in the asyncio API. To write a
behaviour test once and run it against both, a test talks to *owners*: each owner is a
dedicated thread (sync flavor) or a dedicated task on a shared event-loop thread (asyncio
flavor), and runs, one after another, the calls it is given::

    flavor = Flavor("asyncio")
    client = flavor.create_client(config)
    lock = client.get_lock("x")
    alice, bob = flavor.owner("alice"), flavor.owner("bob")
    alice(lock.lock)
    assert bob(lock.try_lock, 0.2) is False
    alice(lock.unlock)
    flavor.close()

The calls block the test until the owner has run them (``owner.start(...)`` returns a
future instead), and exceptions propagate to the test as they were raised.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import inspect
import threading
import time
from collections.abc import Callable
from typing import Any, Literal

import redisson_py.asyncio
from redisson_py import MultiLock, Redisson, RedLock

FlavorName = Literal["sync", "asyncio"]


class Owner:
    """Runs calls one after another in its own thread or task (see the module doc)."""

    def __init__(self, flavor: Flavor, name: str):
        self.name = name
        self._flavor = flavor
        if flavor.name == "sync":
            self._executor: concurrent.futures.ThreadPoolExecutor | None = (
                concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix=f"owner-{name}")
            )
        else:
            self._executor = None
            self._queue: asyncio.Queue[Any] = flavor.call_soon(asyncio.Queue)
            self._task = flavor.call_soon(lambda: asyncio.ensure_future(self._serve()))

    async def _serve(self) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            function, args, kwargs, future = item
            try:
                result = function(*args, **kwargs)
                if inspect.isawaitable(result):
                    result = await result
            except BaseException as error:  # handed to the test, which raised it
                future.set_exception(error)
                if isinstance(error, asyncio.CancelledError):
                    return
            else:
                future.set_result(result)

    def start(
        self, function: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        """Queue ``function(*args, **kwargs)`` on this owner; return its future."""
        if self._executor is not None:
            return self._executor.submit(function, *args, **kwargs)
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._flavor.loop.call_soon_threadsafe(
            self._queue.put_nowait, (function, args, kwargs, future)
        )
        return future

    def start_timed(
        self, function: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[tuple[Any, float]]:
        """Like `start`; the future's result is ``(result, finished_at)``, the
        ``time.monotonic()`` at which the owner itself saw the call return (free of
        the delay of handing the result back to the test)."""
        if self._executor is not None:

            def timed() -> tuple[Any, float]:
                result = function(*args, **kwargs)
                return result, time.monotonic()

            return self.start(timed)

        async def timed_async() -> tuple[Any, float]:
            result = function(*args, **kwargs)
            if inspect.isawaitable(result):
                result = await result
            return result, time.monotonic()

        return self.start(timed_async)

    def __call__(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``function(*args, **kwargs)`` as this owner and return its result."""
        return self.start(function, *args, **kwargs).result(timeout=self._flavor.call_timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Stop after the call in progress (``timeout`` seconds at most for a task, which
        is then cancelled)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            return

        async def finish() -> None:
            self._queue.put_nowait(None)
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._task, timeout)

        self._flavor.run(finish())


class Flavor:
    """The sync or the asyncio API, behind one blocking interface for tests."""

    def __init__(self, name: FlavorName, *, call_timeout: float = 120.0):
        self.name = name
        self.call_timeout = call_timeout
        self._owners: list[Owner] = []
        self._clients: list[Any] = []
        self.loop = asyncio.new_event_loop()
        self._thread: threading.Thread | None = None
        if name == "asyncio":
            self._thread = threading.Thread(
                target=self.loop.run_forever, name="flavor-loop", daemon=True
            )
            self._thread.start()

    def call_soon(self, function: Callable[[], Any]) -> Any:
        """Run ``function()`` on the event loop thread; return its result."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()

        def call() -> None:
            try:
                future.set_result(function())
            except BaseException as error:
                future.set_exception(error)

        self.loop.call_soon_threadsafe(call)
        return future.result(timeout=self.call_timeout)

    def run(self, awaitable_or_value: Any) -> Any:
        """Await a coroutine on the loop (asyncio flavor) or return a value as it is.

        A coroutine of an asyncio lock method is a `collections.abc.Coroutine` (its
        truth test raises), not a native one: `inspect.iscoroutine` misses it."""
        if asyncio.iscoroutine(awaitable_or_value):
            return asyncio.run_coroutine_threadsafe(awaitable_or_value, self.loop).result(
                timeout=self.call_timeout
            )
        return awaitable_or_value

    @property
    def redisson(self) -> Any:
        """The client class of this flavor."""
        return Redisson if self.name == "sync" else redisson_py.asyncio.Redisson

    @property
    def multilock(self) -> Any:
        return MultiLock if self.name == "sync" else redisson_py.asyncio.MultiLock

    @property
    def redlock(self) -> Any:
        return RedLock if self.name == "sync" else redisson_py.asyncio.RedLock

    def create_client(self, config: Any, **kwargs: Any) -> Any:
        """A client of this flavor for ``config``, shut down by `close`."""
        client = self.run(self.redisson.create(config, **kwargs))
        self._clients.append(client)
        return client

    def owner(self, name: str) -> Owner:
        owner = Owner(self, name)
        self._owners.append(owner)
        return owner

    def close(self) -> None:
        """Shut the clients down, then stop the owners. In that order: an owner still
        blocked in ``lock()`` (a test that failed midway) gets ClientClosedError from the
        shutdown instead of keeping the owner's thread, and the run, waiting for ever."""
        for client in self._clients:
            with contextlib.suppress(Exception):  # teardown: the test's result stands
                self.run(client.shutdown())
        for owner in self._owners:
            owner.close()
        if self._thread is not None:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=10)
        self.loop.close()
