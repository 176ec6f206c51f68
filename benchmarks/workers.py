"""Worker processes for the benchmarks that need several (contended, cluster)."""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.connection import Connection
from typing import Any


@contextlib.contextmanager
def spawned(
    target: Callable[..., None],
    arguments: Sequence[tuple[Any, ...]],
    *,
    what: str,
    ready_timeout: float = 60,
) -> Iterator[list[Connection]]:
    """One spawned process per tuple of ``arguments``, each called as ``target(pipe,
    *args)``; waits for each one's first message (it is ready), then yields this side
    of their pipes. On the way out each is given 10 s to end, and any still running is
    killed (an error, Ctrl-C included): nothing started is left behind."""
    context = multiprocessing.get_context("spawn")
    pipes: list[Connection] = []
    processes = []
    try:
        for args in arguments:
            ours, theirs = context.Pipe()
            process = context.Process(target=target, args=(theirs, *args), daemon=True)
            process.start()
            pipes.append(ours)
            processes.append(process)
        for pipe in pipes:
            if not pipe.poll(ready_timeout):
                raise RuntimeError(f"{what}: a worker process did not start")
            pipe.recv()
        yield pipes
        for process in processes:
            process.join(10)
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
                process.join()
