"""The process backend: each node is a ``redis-server`` child process of this one.

Children start in their own session, so a Ctrl-C in the terminal reaches only this
process, which then tears the topology down in order. Unless a topology is detached,
each child also asks the kernel (``PR_SET_PDEATHSIG``) to SIGKILL it when this process
dies, so even a SIGKILLed test run leaves no redis-server behind. That signal is tied to
the *thread* that forked the child, which is why this backend never launches from worker
threads.

A node of a topology with ``network="namespace"`` is moved into the topology's network
namespace by ``setns`` in the child, before ``exec`` (`child_setup`), rather than
run through ``ip netns exec``: no extra program between us and redis-server (the pid we
hold is the node's), and no private mount namespace, which ``ip netns exec`` would make.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

from redisson_py.testing.backends.base import LaunchPlan, NodeRuntime
from redisson_py.testing.backends.binaries import RedisServerBinary, find_redis_server
from redisson_py.testing.backends.procinfo import process_state
from redisson_py.testing.network.namespace import enter_in_child, open_namespace

__all__ = ["ProcessBackend", "ProcessRuntime", "child_setup"]

_PR_SET_PDEATHSIG = 1


def _death_signal_setter() -> Any:
    """A preexec function that makes the child die with its parent, or None off Linux."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def set_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        # The parent may have died between fork and prctl: then nobody would signal us.
        if os.getppid() != parent:
            os._exit(1)

    return set_death_signal


def child_setup(
    *, die_with_parent: bool, namespace_fd: int | None = None
) -> Callable[[], None] | None:
    """The ``preexec_fn`` of a child: into the network namespace open at ``namespace_fd``
    first (when given), then the parent-death signal (when ``die_with_parent``); None
    when there is nothing to do."""
    steps = [
        step
        for step in (
            enter_in_child(namespace_fd) if namespace_fd is not None else None,
            _death_signal_setter() if die_with_parent else None,
        )
        if step is not None
    ]
    if not steps:
        return None

    def setup() -> None:
        for step in steps:
            step()

    return setup


class ProcessRuntime(NodeRuntime):
    """A node run as a child process; its stdout and stderr go to ``node.log``."""

    def __init__(self, binary: RedisServerBinary, plan: LaunchPlan):
        self._binary = binary
        self._plan = plan
        self._popen: subprocess.Popen[bytes] | None = None
        self._paused = False
        self._log_path = plan.directory / "node.log"

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen is not None else None

    def start(self) -> None:
        argv = [str(self._binary.path), str(self._plan.config_path)]
        if self._plan.kind == "sentinel":
            argv.append("--sentinel")
        namespace = self._plan.network_namespace
        namespace_fd = open_namespace(namespace) if namespace else None
        preexec = child_setup(die_with_parent=not self._plan.detached, namespace_fd=namespace_fd)
        # The plan's extra variables on top of ours (None: inherit ours unchanged).
        extra = dict(self._plan.environment)
        environment = {**os.environ, **extra} if extra else None
        with contextlib.ExitStack() as stack:
            if namespace_fd is not None:
                stack.callback(os.close, namespace_fd)
            log = stack.enter_context(self._log_path.open("ab"))
            self._popen = subprocess.Popen(
                argv,
                cwd=self._plan.directory,
                env=environment,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=preexec,  # noqa: PLW1509 - only setns and prctl, see module doc
                close_fds=True,
            )
        self._paused = False

    def _signal(self, signum: int) -> bool:
        if self._popen is None or self._popen.poll() is not None:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._popen.pid, signum)
            return True
        return False

    def kill(self) -> None:
        if self._signal(signal.SIGKILL):
            assert self._popen is not None
            self._popen.wait()
        self._paused = False

    def terminate(self, timeout: float) -> None:
        if self._popen is None or self._popen.poll() is not None:
            return
        if self._paused:
            self.resume()
        self._signal(signal.SIGTERM)
        try:
            self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def pause(self) -> None:
        if self._signal(signal.SIGSTOP):
            self._wait_state(stopped=True)
            self._paused = True

    def resume(self) -> None:
        if self._signal(signal.SIGCONT):
            self._wait_state(stopped=False)
        self._paused = False

    def _wait_state(self, *, stopped: bool) -> None:
        # SIGSTOP/SIGCONT are delivered asynchronously; callers are promised the node is
        # frozen (or thawed) when pause() (resume()) returns.
        assert self._popen is not None
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            state = process_state(self._popen.pid)
            if state is None or state == "Z" or (state in ("T", "t")) == stopped:
                return
            time.sleep(0.005)

    def is_running(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def is_paused(self) -> bool:
        return self._paused and self.is_running()

    def exit_description(self) -> str | None:
        if self._popen is None:
            return "not started"
        code = self._popen.poll()
        if code is None:
            return None
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = str(-code)
            return f"killed by {name}"
        return f"exited with code {code}"

    def log(self) -> str:
        try:
            return self._log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    def remove(self) -> None:
        self.kill()

    def record(self) -> dict[str, Any]:
        return {"pid": self.pid, "directory": str(self._plan.directory)}


class ProcessBackend:
    """Runs nodes as local ``redis-server`` processes (see `binaries` for which)."""

    name = "process"
    parallel_launch = False

    def __init__(self, binary: RedisServerBinary | None = None):
        self.binary = binary or find_redis_server()

    def create(self, plan: LaunchPlan) -> ProcessRuntime:
        return ProcessRuntime(self.binary, plan)

    def describe(self) -> str:
        return f"redis-server {self.binary.version} at {self.binary.path} ({self.binary.origin})"

    def close(self) -> None:
        return None
