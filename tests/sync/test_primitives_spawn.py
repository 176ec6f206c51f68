"""The threaded shell's background work (`spawn`): what a queued lock's hand-off, an
undo or a shutdown release runs after the call that started it has returned."""

from __future__ import annotations

import os
import threading

import pytest

from redisson_py.sync import _primitives
from redisson_py.sync._primitives import spawn


def _run(work_done: threading.Event, seen: list[threading.Thread], fail: bool = False) -> None:
    def work() -> None:
        seen.append(threading.current_thread())
        work_done.set()
        if fail:
            raise RuntimeError("a broken promise not to raise")

    spawn("redisson-py-test", work)
    assert work_done.wait(5)


def test_background_work_runs_on_a_kept_thread_not_a_new_one_each_time() -> None:
    # A new thread per call cost the caller its start (about half a millisecond on a
    # busy machine), before a queued lock's lock() returned.
    seen: list[threading.Thread] = []
    for _ in range(3):
        done = threading.Event()
        _run(done, seen)
        # the thread goes back to waiting for work right after it
        pool = getattr(_primitives, "_background", None)
        for _ in range(500):
            if getattr(pool, "_idle", 1) > 0:
                break
            threading.Event().wait(0.01)
    assert len(set(map(id, seen))) == 1
    assert seen[0].daemon


def test_work_that_raises_leaves_the_thread_serving() -> None:
    seen: list[threading.Thread] = []
    _run(threading.Event(), seen, fail=True)
    done = threading.Event()
    _run(done, seen)
    assert len(seen) == 2


def test_background_work_runs_at_once_even_when_every_kept_thread_is_busy() -> None:
    release = threading.Event()
    started = threading.Event()
    spawn("redisson-py-test-busy", lambda: (started.set(), release.wait(5)))
    assert started.wait(5)
    try:
        done = threading.Event()
        spawn("redisson-py-test", done.set)
        assert done.wait(5)  # not queued behind the busy one
    finally:
        release.set()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # 3.12+: fork() with threads
def test_a_forked_child_runs_background_work_on_threads_of_its_own() -> None:
    _run(threading.Event(), [])  # the parent keeps an idle thread
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its parent's idle thread does not exist here
        code = 1
        try:
            done = threading.Event()
            spawn("redisson-py-test-child", done.set)
            code = 0 if done.wait(5) else 2
        finally:
            os.write(write, bytes([code]))
            os._exit(0)
    os.close(write)
    try:
        assert os.read(read, 1) == b"\x00"
    finally:
        os.close(read)
        os.waitpid(pid, 0)
