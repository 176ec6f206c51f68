"""Teardown that leaves nothing behind, whatever way the process ends.

Layers, each catching what the one before can miss:

1. [`Topology.stop`][redisson_py.testing.Topology.stop] (explicit, context manager,
   pytest fixture finalizers);
2. every started, non-detached topology is registered here; an ``atexit`` hook stops
   those still running at interpreter exit (after a ``KeyboardInterrupt`` too);
3. SIGTERM and SIGHUP, whose default action kills Python without running ``atexit``, get
   a handler (only where none was installed) that stops them, then lets the signal take
   its default course;
4. child processes die with their parent (``PR_SET_PDEATHSIG``, see the process
   backend), which covers SIGKILL of this process for the process backend;
5. `sweep_leftovers` stops what a dead owner left: topologies in state files and
   labelled containers whose owner process is gone and that were not detached, with
   their network namespaces (``network="namespace"``), and the scratch namespaces of a
   dead process's partition-support check. It runs before the first topology of a
   process starts, and at the end of a pytest session.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING, Any

from redisson_py.testing.errors import TopologyError
from redisson_py.testing.network.namespace import NAMESPACE_DIR, delete_namespace
from redisson_py.testing.topologies.ports import prune_claims
from redisson_py.testing.topologies.state import (
    iter_states,
    owner_alive,
    remove_state_dir,
    stop_from_state,
)

if TYPE_CHECKING:
    from redisson_py.testing.topologies.topology import Topology

__all__ = ["live_topologies", "register", "stop_all", "sweep_leftovers", "unregister"]

_lock = threading.RLock()
_live: dict[str, Topology] = {}
_installed = False
_swept: set[str] = set()


def register(topology: Topology) -> None:
    """Track ``topology`` until it is stopped; installs the exit hooks on first use."""
    with _lock:
        _live[topology.id] = topology
        _install_hooks()


def unregister(topology: Topology) -> None:
    with _lock:
        _live.pop(topology.id, None)


def live_topologies() -> list[Topology]:
    """The topologies this process started and has not stopped (detached ones excluded)."""
    with _lock:
        return list(_live.values())


_finalizers: dict[int, Callable[[], None]] = {}


def register_finalizer(key: int, finalizer: Callable[[], None]) -> None:
    """Run ``finalizer`` (idempotent, after the topologies stop) when this process exits
    or gets SIGTERM/SIGHUP, as for topologies, unless `unregister_finalizer` was
    called with ``key`` first. For what a harness run shares outside its topologies (a
    fake clock's shared memory)."""
    with _lock:
        _finalizers[key] = finalizer
        _install_hooks()


def unregister_finalizer(key: int) -> None:
    with _lock:
        _finalizers.pop(key, None)


def stop_all() -> None:
    """Stop every registered topology, then run the registered finalizers; never raises."""
    for topology in live_topologies():
        with contextlib.suppress(Exception):
            topology.stop()
    with _lock:
        finalizers = list(_finalizers.values())
        _finalizers.clear()
    for finalizer in finalizers:
        with contextlib.suppress(Exception):
            finalizer()


def _install_hooks() -> None:
    global _installed  # noqa: PLW0603 - once per process
    if _installed:
        return
    _installed = True
    atexit.register(stop_all)
    if threading.current_thread() is not threading.main_thread():
        return
    for signum in (signal.SIGTERM, signal.SIGHUP):
        try:
            current = signal.getsignal(signum)
        except ValueError:
            continue
        # Only where nobody chose a behaviour: a program with its own handler (the CLI,
        # a test runner) decides itself and reaches us through atexit.
        if current in (signal.SIG_DFL, None):
            signal.signal(signum, _stop_then_default)


def _stop_then_default(signum: int, frame: FrameType | None) -> None:
    stop_all()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def sweep_leftovers(*, backend: str | None = None, force: bool = False) -> list[str]:
    """Stop topologies and containers whose owner process died without stopping them.

    Detached topologies and those of live owners are left alone. Runs once per process
    and backend unless ``force``. Returns a line per topology swept, for logs.
    """
    key = backend or "all"
    with _lock:
        if key in _swept and not force:
            return []
        _swept.add(key)
    swept: list[str] = []
    for directory, state in iter_states():
        if state.get("detached"):
            continue
        owner = state.get("owner") or {}
        if owner_alive(int(owner.get("pid", 0) or 0), int(owner.get("start_time", 0) or 0)):
            continue
        try:
            stopped = stop_from_state(state)
        except TopologyError as exc:
            # Kept for the next sweep; one leftover must not stop a new start.
            swept.append(f"{state.get('kind')} {state.get('id')}: {exc}")
            continue
        remove_state_dir(directory)
        swept.append(f"{state.get('kind')} {state.get('id')}: {len(stopped)} node(s) stopped")
    if backend in (None, "container"):
        swept += _sweep_orphan_containers()
    if backend in (None, "process"):
        swept += _sweep_check_namespaces()
    prune_claims()
    return swept


_CHECK_NAMESPACE = re.compile(r"^rpy-check-(\d+)-[0-9a-f]+$")


def _sweep_check_namespaces() -> list[str]:
    """Delete the scratch namespaces (``rpy-check-<pid>-...``) of the partition-support
    check whose process is gone (it deletes its own unless killed mid-check)."""
    swept: list[str] = []
    with contextlib.suppress(OSError):
        for entry in NAMESPACE_DIR.iterdir():
            match = _CHECK_NAMESPACE.match(entry.name)
            if match and not owner_alive(int(match.group(1)), 0):
                with contextlib.suppress(Exception):
                    if delete_namespace(entry.name):
                        swept.append(f"namespace {entry.name}")
    return swept


def _sweep_orphan_containers() -> list[str]:
    """Remove labelled containers of dead owners that no state file accounted for."""
    from redisson_py.testing.backends.docker_engine import docker_engine_answers  # noqa: PLC0415

    if not docker_engine_answers():
        return []
    try:
        import docker  # noqa: PLC0415
    except ImportError:
        return []
    from redisson_py.testing.backends.container import (  # noqa: PLC0415
        LABEL_DETACHED,
        LABEL_HARNESS,
        LABEL_OWNER_PID,
        LABEL_OWNER_START,
    )

    swept: list[str] = []
    client: Any = docker.from_env(timeout=30)
    try:
        # ignore_removed: a container another run removes between the listing and its
        # inspection (test runs side by side) is skipped, not an error.
        for container in client.containers.list(
            all=True, filters={"label": f"{LABEL_HARNESS}=1"}, ignore_removed=True
        ):
            labels = container.labels
            if labels.get(LABEL_DETACHED) == "1":
                continue
            pid = int(labels.get(LABEL_OWNER_PID, "0") or 0)
            start = int(labels.get(LABEL_OWNER_START, "0") or 0)
            if owner_alive(pid, start):
                continue
            with contextlib.suppress(docker.errors.APIError):
                container.remove(force=True, v=True)
                swept.append(f"container {container.name}")
    finally:
        client.close()
    return swept
