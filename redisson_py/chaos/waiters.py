"""Scenario 5: waiters across a failover.

A holder takes the lock with a 3 s lease; ten waiter threads of another client block on
it; the master is killed. The holder's lease runs out (on the new master, if the key was
replicated; at once if it was lost), and every waiter acquires in turn, holding it for
20 ms, without restarting its client: the waiters' subscriptions follow the failover,
and a waiter never sleeps longer than the holder's TTL.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from redisson_py import Redisson
from redisson_py.chaos.common import client_configs, fresh_topology, master_of, unique

LEASE = 3.0
WAITERS = 10
TURN = 0.02


@dataclass
class WaitersRun:
    topology: str
    failover_seconds: float
    acquired_after: list[float] = field(default_factory=list)
    """Seconds from the kill to each waiter's grant, in grant order."""
    errors: list[str] = field(default_factory=list)

    @property
    def budget(self) -> float:
        """TTL + failover time, plus each earlier waiter's turn and a margin."""
        return LEASE + self.failover_seconds + WAITERS * (TURN + 0.05) + 1.0

    @property
    def ok(self) -> bool:
        return (
            len(self.acquired_after) == WAITERS
            and not self.errors
            and max(self.acquired_after) <= self.budget
        )


def run_once(kind: str, backend: str) -> WaitersRun:
    with fresh_topology(kind, backend) as topology:
        name = unique("waiters")
        [config] = client_configs(topology, sync=True, timeout=1.0)
        with Redisson.create(config) as holder, Redisson.create(config) as others:
            if not holder.get_lock(name).try_lock(0.0, LEASE):
                raise RuntimeError("the holder could not take the lock")
            lock = others.get_lock(name)
            killed_at: list[float] = []
            run = WaitersRun(kind, 0.0)
            guard = threading.Lock()

            def wait_turn() -> None:
                try:
                    lock.lock()
                    granted = time.monotonic()
                    time.sleep(TURN)
                    lock.unlock()
                    with guard:
                        run.acquired_after.append(granted - killed_at[0])
                except Exception as error:
                    with guard:
                        run.errors.append(repr(error))

            threads = [threading.Thread(target=wait_turn) for _ in range(WAITERS)]
            for thread in threads:
                thread.start()
            time.sleep(0.5)  # every waiter is subscribed and asleep
            master = master_of(topology, name)
            master.kill()
            killed_at.append(time.monotonic())
            topology.wait_for_new_master(master, timeout=60)
            run.failover_seconds = time.monotonic() - killed_at[0]
            for thread in threads:
                thread.join(timeout=run.budget + 30)
            run.acquired_after.sort()
            return run
