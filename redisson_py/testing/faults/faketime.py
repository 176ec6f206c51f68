"""A node's wall clock moved on purpose: libfaketime, preloaded into the node's process.

A `FakeClock` is one offset, kept in a timestamp file that libfaketime reads on
every time call (``FAKETIME_TIMESTAMP_FILE`` with ``FAKETIME_NO_CACHE=1``); the processes
started with its `FakeClock.environment` (pass it to ``start_topology(...,
node_environment={"master-0": clock.environment()})``) see the real time plus that offset
from the moment `FakeClock.jump` rewrites the file. Only the wall clock moves (an
NTP step does that); the monotonic clock Redis times its own timers with stays true
(``FAKETIME_DONT_FAKE_MONOTONIC=1``). A Redis whose clock jumps forward expires keys
early: a lock's key set with a 3 s TTL is gone at once after a 5 s jump, while its holder,
on a true clock, still counts its lease.

Two things this module takes care of, so callers need not:

- Debian's redis-server takes its allocator from the system's jemalloc, and jemalloc
  reads the clock while libfaketime itself is still initialising, which libfaketime
  cannot recover from: the server never starts. glibc's ``libc_malloc_debug.so.0`` is
  preloaded first, so the process allocates with glibc's allocator (it does, through that
  library, when no debugging feature is switched on) and the recursion never happens.
- libfaketime makes a POSIX semaphore and shared memory object for every process it is
  loaded into, and deletes them only when the process exits normally; the harness kills
  nodes with SIGKILL, which would leave ``/dev/shm/faketime_*`` behind. Each clock makes
  one pair itself and hands it to its processes (``FAKETIME_SHARED``), so they make none,
  and `FakeClock.close` deletes it.

Linux only. `faketime_support` says whether it can run here, or why not.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import secrets
from pathlib import Path
from types import TracebackType

from redisson_py.testing.errors import TopologyError
from redisson_py.testing.topologies import cleanup

__all__ = ["FakeClock", "faketime_support", "find_libfaketime"]

_LIBRARY_PATTERNS = (
    "/usr/lib/*/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/lib64/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
)
_MALLOC_DEBUG_PATTERNS = (
    "/lib/*/libc_malloc_debug.so.0",
    "/usr/lib/*/libc_malloc_debug.so.0",
    "/lib64/libc_malloc_debug.so.0",
    "/usr/lib64/libc_malloc_debug.so.0",
)
_SHM_DIR = Path("/dev/shm")
# Larger than libfaketime's shared struct (a few counters and timespecs): it maps that
# struct over the object, so the object must not be shorter.
_SHM_SIZE = 4096


def _first(patterns: tuple[str, ...]) -> Path | None:
    for pattern in patterns:
        for match in sorted(glob.glob(pattern)):
            if os.path.isfile(match):
                return Path(match)
    return None


def find_libfaketime() -> Path | None:
    """libfaketime's preload library: ``REDISSON_PY_LIBFAKETIME`` if set, else where
    distributions install it (Debian: the ``libfaketime`` package); None if not found."""
    configured = os.environ.get("REDISSON_PY_LIBFAKETIME")
    if configured:
        return Path(configured) if os.path.isfile(configured) else None
    return _first(_LIBRARY_PATTERNS)


def faketime_support() -> str | None:
    """None when clocks can be faked here, else why not, in one sentence (for
    ``pytest.skip`` and the CLI)."""
    if not _SHM_DIR.is_dir() or not hasattr(os, "ftruncate"):
        return "faked clocks need Linux (/dev/shm, LD_PRELOAD)."
    if find_libfaketime() is None:
        return (
            "faked clocks need libfaketime: install Debian's libfaketime, or point "
            "REDISSON_PY_LIBFAKETIME at libfaketime.so.1."
        )
    return None


class _SharedObjects:
    """The semaphore and shared memory object libfaketime's processes share, made here
    so that none of them makes its own (see the module docstring)."""

    def __init__(self) -> None:
        tag = f"rpy-{os.getpid()}-{secrets.token_hex(4)}"
        self.semaphore = f"/faketime_sem_{tag}"
        self.memory = f"/faketime_shm_{tag}"
        libc = ctypes.CDLL(None, use_errno=True)
        libc.sem_open.restype = ctypes.c_void_p
        libc.sem_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_uint]
        libc.sem_close.argtypes = [ctypes.c_void_p]
        libc.sem_unlink.argtypes = [ctypes.c_char_p]
        self._libc = libc
        handle = libc.sem_open(self.semaphore.encode(), os.O_CREAT | os.O_EXCL, 0o600, 1)
        if not handle:  # SEM_FAILED is a null pointer in glibc
            errno = ctypes.get_errno()
            raise TopologyError(
                f"cannot make semaphore {self.semaphore} for libfaketime: {os.strerror(errno)}."
            )
        libc.sem_close(handle)
        try:
            fd = os.open(
                _SHM_DIR / self.memory.lstrip("/"), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600
            )
            try:
                os.ftruncate(fd, _SHM_SIZE)
            finally:
                os.close(fd)
        except OSError as exc:
            self.delete()
            raise TopologyError(f"cannot make {self.memory} for libfaketime: {exc}.") from None
        # Deleted at exit or SIGTERM too, like a topology, if not before.
        cleanup.register_finalizer(id(self), self.delete)

    @property
    def variable(self) -> str:
        """``FAKETIME_SHARED``'s value: the semaphore's name, a space, the memory's."""
        return f"{self.semaphore} {self.memory}"

    def delete(self) -> None:
        """Delete both (idempotent)."""
        cleanup.unregister_finalizer(id(self))
        self._libc.sem_unlink(self.semaphore.encode())
        with contextlib.suppress(FileNotFoundError):
            (_SHM_DIR / self.memory.lstrip("/")).unlink()


class FakeClock:
    """A wall-clock offset for the processes started with `environment`.

    ``directory`` holds its timestamp file (``<name>.faketime``). The offset starts at 0;
    `jump` moves it, `reset` brings it back to 0, both at once for every
    process using the clock. Close it (or leave its ``with`` block) after those processes
    have exited: that deletes what they shared. Raises
    [`TopologyError`][redisson_py.testing.TopologyError] when libfaketime is not
    available (`faketime_support` says why).
    """

    def __init__(self, directory: Path, name: str):
        reason = faketime_support()
        if reason is not None:
            raise TopologyError(reason)
        library = find_libfaketime()
        assert library is not None
        self.name = name
        self.path = Path(directory) / f"{name}.faketime"
        self._library = library
        self._offset = 0.0
        self._write(0.0)
        self._shared: _SharedObjects | None = _SharedObjects()

    def __repr__(self) -> str:
        return f"<FakeClock {self.name} {self._offset:+g} s>"

    def __enter__(self) -> FakeClock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def offset(self) -> float:
        """Seconds the faked clock is ahead of the real one (negative: behind)."""
        return self._offset

    def environment(self) -> dict[str, str]:
        """The variables that put a process on this clock."""
        if self._shared is None:
            raise TopologyError(f"fake clock {self.name} is closed.")
        preload = [str(self._library)]
        malloc_debug = _first(_MALLOC_DEBUG_PATTERNS)
        if malloc_debug is not None:
            preload.insert(0, str(malloc_debug))  # first: see the module docstring
        return {
            "LD_PRELOAD": " ".join(preload),
            "FAKETIME_TIMESTAMP_FILE": str(self.path),
            "FAKETIME_NO_CACHE": "1",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1",
            "FAKETIME_SHARED": self._shared.variable,
        }

    def jump(self, seconds: float) -> None:
        """Move the clock by ``seconds`` (forward when positive), on top of any offset."""
        self.set_offset(self._offset + seconds)

    def reset(self) -> None:
        """Back to the real time (a jump back by the offset)."""
        self.set_offset(0.0)

    def set_offset(self, seconds: float) -> None:
        """Make the clock ``seconds`` ahead of the real time."""
        self._write(seconds)
        self._offset = seconds

    def _write(self, seconds: float) -> None:
        # Replaced whole: libfaketime reads the file on every call and must never see it
        # half written. The decimal point is a point: servers run in the C numeric locale.
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(f"{seconds:+.3f}\n")
        temporary.replace(self.path)

    def close(self) -> None:
        """Delete what the clock's processes shared (after they exited). Idempotent."""
        if self._shared is not None:
            self._shared.delete()
            self._shared = None
