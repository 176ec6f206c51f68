"""State files: what a topology left running, readable by another process.

Each topology writes ``<run root>/topologies/<id>/state.json`` when it starts and updates
it as nodes launch: kind, backend, owner process, whether it is detached, per node its
pid (and directory) or its container, and the network namespace of a topology started
with ``network="namespace"``. Two readers use it:

- ``redisson-py topology down`` stops detached topologies;
- the leftover sweep stops topologies whose owner died without tearing them down.

Stopping from a state file never trusts a pid alone: a process is signalled only if its
working directory is still the node's directory (Redis changes into its ``dir``, which the
harness sets to the node's directory; its command line is no proof, Redis rewrites it
into a process title), so a recycled pid is left alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from redisson_py.testing.backends.base import Owner
from redisson_py.testing.backends.procinfo import owner_alive, process_start_time, process_state
from redisson_py.testing.network.namespace import PREFIX, delete_namespace
from redisson_py.testing.topologies.paths import topologies_root

__all__ = [
    "STATE_FILE",
    "current_owner",
    "iter_states",
    "owner_alive",
    "process_start_time",
    "remove_state_dir",
    "stop_from_state",
    "write_state",
]

STATE_FILE = "state.json"


def current_owner() -> Owner:
    """This process, as recorded in state files and container labels."""
    pid = os.getpid()
    return Owner(pid=pid, start_time=process_start_time(pid) or 0)


def write_state(directory: Path, state: dict[str, Any]) -> None:
    """Write ``state`` atomically to ``directory/state.json``."""
    target = directory / STATE_FILE
    temporary = directory / f".{STATE_FILE}.tmp"
    temporary.write_text(json.dumps(state, indent=2, sort_keys=True))
    temporary.replace(target)


def iter_states() -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every readable state file under the run root, with its topology directory."""
    root = topologies_root()
    for directory in sorted(root.iterdir()):
        path = directory / STATE_FILE
        try:
            state = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(state, dict):
            yield directory, state


def _working_directory(pid: int) -> str:
    try:
        target = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""
    return target.removesuffix(" (deleted)")


def _stop_pid(pid: int, directory: str) -> bool:
    if not directory or _working_directory(pid) != directory:
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        state = process_state(pid)
        if state is None or state == "Z":
            break
        time.sleep(0.01)
    return True


def stop_from_state(state: dict[str, Any]) -> list[str]:
    """Stop every node recorded in ``state``; return the names of the nodes stopped.

    Processes get SIGKILL (after the working-directory check); containers of the topology are
    removed by label, which also catches one created but not yet recorded. A recorded
    network namespace is deleted after the nodes (only ``rpy-<id>`` of this topology).
    """
    stopped: list[str] = []
    for node in state.get("nodes", []):
        pid = node.get("pid")
        if isinstance(pid, int) and _stop_pid(pid, str(node.get("directory", ""))):
            stopped.append(str(node.get("name")))
    if state.get("backend") == "container":
        stopped += _remove_containers(str(state.get("id", "")))
    _delete_recorded_namespace(state)
    return stopped


def _delete_recorded_namespace(state: dict[str, Any]) -> None:
    network = state.get("network")
    if not isinstance(network, dict):
        return
    name = network.get("namespace")
    # Only the name this topology's id gives: a corrupt state file names nothing else.
    if isinstance(name, str) and name == f"{PREFIX}{state.get('id', '')}":
        delete_namespace(name)


def _remove_containers(topology_id: str) -> list[str]:
    if not topology_id:
        return []
    from redisson_py.testing.backends.docker_engine import (  # noqa: PLC0415
        docker_engine_answers,
    )

    if not docker_engine_answers():
        return []
    import docker  # noqa: PLC0415

    from redisson_py.testing.backends.container import (  # noqa: PLC0415
        LABEL_NODE,
        LABEL_TOPOLOGY,
    )

    removed: list[str] = []
    client = docker.from_env(timeout=30)
    try:
        for container in client.containers.list(
            all=True, filters={"label": f"{LABEL_TOPOLOGY}={topology_id}"}, ignore_removed=True
        ):
            with contextlib.suppress(docker.errors.APIError):
                container.remove(force=True, v=True)
                removed.append(container.labels.get(LABEL_NODE, container.name))
    finally:
        client.close()
    return removed


def remove_state_dir(directory: Path) -> None:
    """Delete a topology's directory (node files and state).

    Only a directory directly inside a ``topologies`` directory is deleted: a guard
    against a corrupt state file naming some other path. The run root is not consulted,
    since it may have changed (``REDISSON_PY_RUN_DIR``) since the topology started.
    """
    resolved = directory.resolve()
    if resolved.parent.name == "topologies" and resolved.name:
        shutil.rmtree(resolved, ignore_errors=True)
