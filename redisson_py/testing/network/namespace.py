"""Named network namespaces (``ip netns``) and switching threads and children into one.

A namespace made here has only its loopback device, up: every address of 127.0.0.0/8 is
local to it, so each node can bind an address of its own and nothing in it can reach
anything outside it. Names start with `PREFIX`; only such names are ever deleted.

Switching uses ``setns(2)`` through ctypes (Python 3.11 has no ``os.setns``). A network
namespace belongs to a *thread*, and a socket keeps the namespace of the thread that
created it: a thread switched in for a moment creates sockets that work from anywhere in
this process. Threads a switched thread starts are in the namespace too.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import subprocess
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from redisson_py.testing.errors import TopologyError

__all__ = [
    "NAMESPACE_DIR",
    "PREFIX",
    "NetworkNamespace",
    "delete_namespace",
    "enter_in_child",
    "namespace_exists",
    "namespace_inode",
    "open_namespace",
    "thread_namespace_inode",
]

PREFIX = "rpy-"
"""Every namespace the harness makes is named ``rpy-...``."""

NAMESPACE_DIR = Path("/run/netns")
"""Where ``ip netns`` keeps its named namespaces (bind mounts of ``/proc/PID/ns/net``)."""

_CLONE_NEWNET = 0x40000000
_NAME = re.compile(r"^rpy-[A-Za-z0-9._-]{1,200}$")
_COMMAND_TIMEOUT = 30.0


def _libc_setns() -> Callable[[int, int], int]:
    libc = ctypes.CDLL(None, use_errno=True)
    setns: Callable[[int, int], int] = libc.setns
    return setns


def _setns(fd: int) -> None:
    if _libc_setns()(fd, _CLONE_NEWNET) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"setns(CLONE_NEWNET) failed: {os.strerror(errno)}")


def enter_in_child(fd: int) -> Callable[[], None]:
    """A function for a child between fork and exec (``preexec_fn``) that moves it into
    the namespace open at ``fd``; it exits the child with status 127 if that fails."""
    setns = _libc_setns()

    def enter() -> None:
        if setns(fd, _CLONE_NEWNET) != 0:
            os._exit(127)

    return enter


def open_namespace(name: str) -> int:
    """A read-only descriptor on the named namespace (close it after use).

    Raises [`TopologyError`][redisson_py.testing.TopologyError] if it does not exist."""
    try:
        return os.open(NAMESPACE_DIR / _check_name(name), os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise TopologyError(f"network namespace {name} cannot be opened: {exc}.") from None


def thread_namespace_inode() -> int:
    """The inode of the calling thread's network namespace (equal inodes, same namespace)."""
    return os.stat("/proc/thread-self/ns/net").st_ino


def namespace_inode(name: str) -> int | None:
    """The inode of the named namespace, or None if it does not exist."""
    try:
        return (NAMESPACE_DIR / name).stat().st_ino
    except OSError:
        return None


def namespace_exists(name: str) -> bool:
    """Whether ``ip netns`` has a namespace called ``name``."""
    return namespace_inode(name) is not None


def _check_name(name: str) -> str:
    if not _NAME.match(name):
        raise TopologyError(
            f"network namespace name {name!r} is not one of the harness's "
            f"({PREFIX}<topology id>: letters, digits, '.', '_', '-')."
        )
    return name


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["ip", *args], capture_output=True, text=True, timeout=_COMMAND_TIMEOUT, check=False
    )


def delete_namespace(name: str) -> bool:
    """Delete the harness's namespace ``name`` (``ip netns delete``); True if it existed.

    Names that are not the harness's are refused
    ([`TopologyError`][redisson_py.testing.TopologyError]): this runs on names read back
    from state files. Processes still inside keep the namespace alive, unnamed, until
    they exit; callers stop them first.
    """
    _check_name(name)
    if not namespace_exists(name):
        return False
    result = _ip("netns", "delete", name)
    if result.returncode != 0 and namespace_exists(name):
        raise TopologyError(
            f"`ip netns delete {name}` failed: {result.stderr.strip() or result.returncode}."
        )
    return True


class NetworkNamespace:
    """One named namespace, made by `create`, removed by `delete`.

    Holds a file descriptor on it while it exists, for switching threads and children.
    """

    def __init__(self, name: str, fd: int):
        self.name = _check_name(name)
        self._fd: int | None = fd
        self.inode = os.fstat(fd).st_ino

    def __repr__(self) -> str:
        return f"<NetworkNamespace {self.name}>"

    @classmethod
    def create(cls, name: str) -> NetworkNamespace:
        """``ip netns add NAME`` and bring its loopback up.

        Raises [`TopologyError`][redisson_py.testing.TopologyError] if the namespace
        exists already or ``ip`` fails; a namespace half made is deleted again.
        """
        _check_name(name)
        if namespace_exists(name):
            raise TopologyError(f"network namespace {name} exists already.")
        added = _ip("netns", "add", name)
        if added.returncode != 0:
            raise TopologyError(
                f"`ip netns add {name}` failed: {added.stderr.strip() or added.returncode}."
            )
        try:
            up = _ip("-n", name, "link", "set", "lo", "up")
            if up.returncode != 0:
                raise TopologyError(
                    f"`ip -n {name} link set lo up` failed: {up.stderr.strip() or up.returncode}."
                )
            fd = open_namespace(name)
        except BaseException:
            with contextlib.suppress(Exception):
                delete_namespace(name)
            raise
        return cls(name, fd)

    @property
    def fd(self) -> int:
        if self._fd is None:
            raise TopologyError(f"network namespace {self.name} has been deleted.")
        return self._fd

    @property
    def deleted(self) -> bool:
        return self._fd is None

    @contextlib.contextmanager
    def entered(self) -> Iterator[None]:
        """Put the calling thread into the namespace for the block, then back into the
        namespace it was in before (which may itself be this one)."""
        previous = os.open("/proc/thread-self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        try:
            _setns(self.fd)
            try:
                yield
            finally:
                _setns(previous)
        finally:
            os.close(previous)

    def child_setup(self) -> Callable[[], None]:
        """See `enter_in_child`."""
        return enter_in_child(self.fd)

    def run(self, argv: Sequence[str], *, stdin: str | None = None) -> None:
        """Run ``argv`` inside the namespace and wait for it.

        Raises [`TopologyError`][redisson_py.testing.TopologyError] with its stderr if it fails.
        """
        result = subprocess.run(
            list(argv),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=_COMMAND_TIMEOUT,
            check=False,
            preexec_fn=self.child_setup(),
        )
        if result.returncode != 0:
            said = (result.stderr or result.stdout).strip() or f"status {result.returncode}"
            raise TopologyError(f"`{' '.join(argv)}` in network namespace {self.name}: {said}.")

    def delete(self) -> None:
        """Close the handle and delete the namespace; idempotent."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        delete_namespace(self.name)
