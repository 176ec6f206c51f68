"""Scenario 6: lost replies. A loopback proxy cuts a connection just after the server
executed an acquire or a release, so the client retries not knowing whether it applied;
hold counts must stay right and the lock must end released."""

from __future__ import annotations

from dataclasses import dataclass

from redisson_py import Config, Redisson
from redisson_py.chaos.common import fresh_topology, unique
from redisson_py.config import ConstantDelay
from redisson_py.core import keyspace
from redisson_py.testing.faults.proxy import ReplyDropper


@dataclass
class RepliesRun:
    dropped: int
    counts: list[int]
    """The hold count after: a lost acquire reply, a second acquire, a lost release reply."""
    released: bool

    @property
    def ok(self) -> bool:
        return self.dropped == 3 and self.counts == [1, 2, 1] and self.released


def run_once(backend: str) -> RepliesRun:
    topology = fresh_topology("single", backend)
    with topology, ReplyDropper(topology.master().port) as proxy:
        config = Config()
        section = config.use_single_server(address=f"redis://127.0.0.1:{proxy.port}")
        section.retry_delay = ConstantDelay(0.05)
        name = unique("replies")
        with Redisson.create(config) as client:
            lock = client.get_lock(name)
            counts = []
            # Markers from the keyspace: the next command carrying the owner's acquire
            # field is the acquire; only a release names an unlock latch.
            proxy.drop_reply_of(keyspace.ACQUIRE_FIELD_PREFIX)
            lock.lock()
            counts.append(lock.hold_count())
            lock.lock()
            counts.append(lock.hold_count())
            proxy.drop_reply_of(keyspace.UNLOCK_LATCH_PREFIX)
            lock.unlock()
            counts.append(lock.hold_count())
            proxy.drop_reply_of(keyspace.UNLOCK_LATCH_PREFIX)
            lock.unlock()
            released = topology.master().client().exists(name) == 0
        return RepliesRun(proxy.dropped, counts, released)
