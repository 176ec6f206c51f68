"""Runs one demo: deployment, worker processes, live progress, summary, teardown.

Everything the run starts (the topology, the workers, a scratch directory) is stopped or
removed before `run_demo` returns or raises, Ctrl-C included; against the user's
own deployment (``--config``) it deletes the keys it wrote. The first Ctrl-C (or SIGTERM)
asks the workers to stop after their current critical section and still ends with a
summary of what ran; a second one stops everything at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from redisson_py import Redisson
from redisson_py.demo.deployment import Deployment, deployment, scratch_directory
from redisson_py.demo.display import Progress, Snapshot
from redisson_py.demo.options import DemoError, DemoKeys, DemoOptions
from redisson_py.demo.summary import Acquisition, Summary, WorkerResult, summarize

READY_TIMEOUT = 60.0
"""Seconds the workers have to start and connect."""

STOP_GRACE = 10.0
"""Seconds the workers have to finish after their deadline or a Ctrl-C."""

POLL_EVERY = 0.1


@dataclass(slots=True)
class DemoOutcome:
    """A finished run: its summary, whether it was cut short, workers that failed."""

    summary: Summary
    title: str
    interrupted: bool = False
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every worker finished and no increment was lost."""
        s = self.summary
        return not self.failures and s.complete and s.lost == 0 and s.duplicates == 0


@dataclass(slots=True)
class _Worker:
    index: int
    process: subprocess.Popen[bytes]
    results: Path
    stderr: Path

    def last_error_line(self) -> str:
        with contextlib.suppress(OSError):
            lines = [ln for ln in self.stderr.read_text().splitlines() if ln.strip()]
            if lines:
                return lines[-1].strip()
        return f"exit status {self.process.returncode}"


def _spawn(options: DemoOptions, dep: Deployment, keys: DemoKeys, scratch: Path) -> list[_Worker]:
    workers = []
    for index in range(options.workers):
        results = scratch / f"worker-{index}.json"
        stderr = scratch / f"worker-{index}.stderr"
        with stderr.open("wb") as errors:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "redisson_py.demo.worker",
                    "--config",
                    str(dep.config_path),
                    "--run-id",
                    keys.run_id,
                    "--index",
                    str(index),
                    "--results",
                    str(results),
                    "--think",
                    repr(options.think),
                    "--parent",
                    str(os.getpid()),
                ],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errors,
            )
        workers.append(_Worker(index, process, results, stderr))
    return workers


def _counts(client: Redisson, keys: DemoKeys) -> dict[int, int]:
    raw: dict[Any, Any] = client.redis(keys.progress).hgetall(keys.progress)
    return {int(k): int(v) for k, v in raw.items()}


def _wait_ready(client: Redisson, keys: DemoKeys, workers: list[_Worker]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while len(_counts(client, keys)) < len(workers):
        for worker in workers:
            if worker.process.poll() is not None:
                raise DemoError(
                    f"demo worker {worker.index} exited before it was ready: "
                    f"{worker.last_error_line()}"
                )
        if time.monotonic() > deadline:
            raise DemoError(f"the demo workers were not ready within {READY_TIMEOUT:g} s.")
        time.sleep(POLL_EVERY)


def _stop(workers: list[_Worker], how: signal.Signals) -> None:
    for worker in workers:
        if worker.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                worker.process.send_signal(how)


def _reap(workers: list[_Worker], timeout: float) -> None:
    """Wait up to ``timeout`` for the workers, then kill (by pid) those still running."""
    deadline = time.monotonic() + timeout
    for worker in workers:
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.process.wait(max(0.0, deadline - time.monotonic()))
    for worker in workers:
        if worker.process.poll() is None:
            worker.process.kill()
            worker.process.wait()


def _read_results(workers: list[_Worker]) -> tuple[list[WorkerResult], list[str]]:
    results, failures = [], []
    for worker in workers:
        try:
            data = json.loads(worker.results.read_text())
        except (OSError, ValueError):
            failures.append(f"worker {worker.index}: no results ({worker.last_error_line()})")
            continue
        acquisitions = [
            Acquisition(*row)
            for row in zip(
                data.get("seq", []),
                data.get("called", []),
                data.get("acquired", []),
                data.get("released", []),
                strict=True,
            )
        ]
        result = WorkerResult(worker.index, int(data["pid"]), acquisitions, data.get("error"))
        if result.error and result.error != "interrupted":
            failures.append(f"worker {worker.index}: {result.error}")
        results.append(result)
    return results, failures


@contextlib.contextmanager
def _signals_as_interrupt() -> Iterator[None]:
    """Ctrl-C and SIGTERM take the orderly path (stop, summary, teardown) while the run
    lasts. SIGINT is set explicitly: a process started in the background of a
    non-interactive shell inherits it ignored, and would then never see Ctrl-C while
    its workers (which set their own handlers) do."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _delete_keys(client: Redisson, keys: DemoKeys) -> None:
    for key in keys.scratch():
        with contextlib.suppress(Exception):
            client.redis(key).delete(key)


def run_demo(options: DemoOptions, out: TextIO, *, live: bool | None = None) -> DemoOutcome:
    """Run the demo ``options`` describe, showing progress on ``out``; return its outcome.

    Raises `DemoError` or another [`RedissonError`][redisson_py.errors.RedissonError] (one
    sentence) when it cannot run: no ``redis-server`` to start, a config that cannot be
    read or reached, a worker that cannot start. A second Ctrl-C raises
    ``KeyboardInterrupt`` after the teardown.
    """
    keys = DemoKeys(secrets.token_hex(4))
    progress = Progress(out, live=live)
    if options.config is None:
        progress.note(f"starting a {options.topology} Redis topology (local processes)...")
    with (
        _signals_as_interrupt(),
        scratch_directory() as scratch,
        deployment(options, scratch) as dep,
    ):
        title = (
            f"redisson-py demo: {options.workers} worker processes, one lock "
            f"({keys.lock!r}), on {dep.description}"
        )
        client = Redisson.create(dep.configs[0])
        progress.note(title)
        workers: list[_Worker] = []
        try:
            workers = _spawn(options, dep, keys, scratch)
            _wait_ready(client, keys, workers)
            started = time.monotonic()
            until = started + options.duration
            client.redis(keys.start).rpush(keys.start, *([repr(until)] * len(workers)))
            interrupted = False
            try:
                while any(w.process.poll() is None for w in workers):
                    now = time.monotonic()
                    progress.show(
                        Snapshot(
                            now - started, options.duration, _counts(client, keys), options.workers
                        )
                    )
                    if now > until + STOP_GRACE:
                        _stop(workers, signal.SIGTERM)
                    time.sleep(POLL_EVERY)
            except KeyboardInterrupt:
                interrupted = True
                progress.note("interrupted: stopping the workers (Ctrl-C again to abort)")
                _stop(workers, signal.SIGTERM)
            _reap(workers, STOP_GRACE)
            ended = time.monotonic()
            final = _counts(client, keys)
            progress.show(Snapshot(ended - started, options.duration, final, options.workers))
            results, failures = _read_results(workers)
            counter = int(client.redis(keys.counter).get(keys.counter) or 0)
        finally:
            progress.close()
            _stop(workers, signal.SIGTERM)
            _reap(workers, 2.0)
            _delete_keys(client, keys)
            client.shutdown()
    released = [a.released for r in results for a in r.acquisitions]
    seconds = (max(released) if released else ended) - started
    summary = summarize(results, counter, seconds, workers=options.workers)
    return DemoOutcome(summary, title, interrupted, failures)
