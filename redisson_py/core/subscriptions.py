"""Bookkeeping of a client's channel subscriptions, shared by both pub/sub shells.

One subscription per channel per client, shared by every waiter of that client: the
table counts the waiters, remembers which node serves the channel, and keeps the wake-up
permits. A message wakes one waiter (it retries the lock; the others would only lose the
race); a permit that arrives while every waiter is busy retrying is kept, capped at the
number of waiters, so no signal is missed and none piles up. A resubscription (failover,
reconnect, slot move) wakes every waiter, since messages may have been lost meanwhile.

The shells add the blocking part (a condition variable or an asyncio future per waiter)
and the connections; this module does no I/O and takes no lock of its own: the shells
call it under theirs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from redisson_py.config.addresses import Address


@dataclass(eq=False)
class ChannelSub:
    """The shared subscription to one channel."""

    channel: str
    waiters: int = 0
    address: Address | None = None
    """The node it is subscribed on; None until confirmed, or after that node failed."""
    permits: int = 0
    confirmed: bool = False
    waker: Any = None
    """The shell's wake-up primitive for this channel's waiters."""

    def signal_one(self) -> None:
        self.permits = min(self.permits + 1, max(self.waiters, 1))

    def signal_all(self) -> None:
        self.permits = max(self.waiters, 1)

    def take(self) -> bool:
        """Consume a permit if there is one."""
        if self.permits > 0:
            self.permits -= 1
            return True
        return False


class SubscriptionTable:
    """Channel -> :class:`ChannelSub`, with waiter counting and placement checks."""

    def __init__(self) -> None:
        self._subs: dict[str, ChannelSub] = {}

    def __len__(self) -> int:
        return len(self._subs)

    def get(self, channel: str) -> ChannelSub | None:
        return self._subs.get(channel)

    def join(self, channel: str, make_waker: Callable[[], Any]) -> tuple[ChannelSub, bool]:
        """Add a waiter to ``channel``; True when the channel is new (subscribe it)."""
        sub = self._subs.get(channel)
        created = sub is None
        if sub is None:
            sub = ChannelSub(channel, waker=make_waker())
            self._subs[channel] = sub
        sub.waiters += 1
        return sub, created

    def leave(self, sub: ChannelSub) -> bool:
        """Remove a waiter; True when it was the last (unsubscribe the channel)."""
        sub.waiters -= 1
        if sub.waiters > 0:
            return False
        if self._subs.get(sub.channel) is sub:
            del self._subs[sub.channel]
        return True

    def on_node(self, address: Address) -> list[ChannelSub]:
        """The subscriptions served by ``address``."""
        return [s for s in self._subs.values() if s.address == address]

    def misplaced(self, placement: Callable[[str], Address | None]) -> list[ChannelSub]:
        """Subscriptions not on the node ``placement`` now names for their channel
        (orphaned by a failed node, or moved by a failover or a slot migration)."""
        return [s for s in self._subs.values() if s.address != placement(s.channel)]
