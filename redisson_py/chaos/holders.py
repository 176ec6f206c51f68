"""Scenarios 3 and 4: a holder that dies, and a holder whose renewals cannot get through.

3. Holder crash: a process holding a watchdog lock is killed with SIGKILL; another
   client gets the lock within the watchdog timeout (3 s here) plus 1 s.
4. Lost renewal: the master is paused for longer than the watchdog timeout while a lock
   is held; once it is back, the holder has been told the lock is lost (callback and
   ERROR line) and its ``unlock()`` raises. Run on a single server: on a sentinel or
   cluster topology the pause would trigger a failover instead.
"""

from __future__ import annotations

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from tempfile import TemporaryDirectory

from redisson_py import LockLost, LockNotOwnedError, Redisson
from redisson_py.chaos.common import client_configs, fresh_topology, master_of, unique

WATCHDOG = 3.0


@dataclass
class CrashRun:
    topology: str
    freed_after: float
    """Seconds from the SIGKILL to the other client's grant."""

    @property
    def ok(self) -> bool:
        return self.freed_after <= WATCHDOG + 1.0


def run_crash(kind: str, backend: str) -> CrashRun:
    with fresh_topology(kind, backend) as topology, TemporaryDirectory() as folder:
        name = unique("crash")
        [config] = client_configs(topology, watchdog=WATCHDOG)
        path = Path(folder) / "redisson.yaml"
        path.write_text(config.to_yaml())
        holder = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "redisson_py.testing.faults.workloads",
                "hold",
                "--config",
                str(path),
                "--lock",
                name,
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout is not None
            if holder.stdout.readline().strip() != "held":
                raise RuntimeError("the holder process did not take the lock")
            with Redisson.create(config) as other:
                lock = other.get_lock(name)
                if lock.try_lock(0.0):
                    raise RuntimeError("the lock was free while the holder lived")
                holder.kill()
                killed = time.monotonic()
                if not lock.try_lock(WATCHDOG * 3):
                    raise RuntimeError("the lock was never freed")
                freed = time.monotonic() - killed
                lock.unlock()
        finally:
            holder.kill()
            holder.wait()
    return CrashRun(kind, freed)


@dataclass
class LostRenewalRun:
    told_after: float | None
    """Seconds from the pause to the lost-lock report (None: never told)."""
    unlock_raised: bool

    @property
    def ok(self) -> bool:
        return self.told_after is not None and self.unlock_raised


def run_lost_renewal(backend: str, pause: float = WATCHDOG * 1.5) -> LostRenewalRun:
    with fresh_topology("single", backend) as topology:
        name = unique("renewal")
        [config] = client_configs(topology, watchdog=WATCHDOG, timeout=0.5)
        events: list[tuple[float, LockLost]] = []

        def record(event: LockLost) -> None:
            events.append((time.monotonic(), event))

        with Redisson.create(config, on_lock_lost=record) as client:
            lock = client.get_lock(name)
            lock.lock()
            master = master_of(topology, name)
            master.pause()
            paused = time.monotonic()
            try:
                time.sleep(pause)
            finally:
                master.resume()
            told = events[0][0] - paused if events else None
            try:
                lock.unlock()
                raised = False
            except LockNotOwnedError:
                raised = True
    return LostRenewalRun(told, raised)
