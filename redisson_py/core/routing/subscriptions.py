"""Bookkeeping of a client's channel subscriptions, shared by both pub/sub shells.

One subscription per channel per client, shared by every waiter of that client: the
table counts the waiters, remembers which node serves the channel, and keeps the wake-up
permits. When the last waiter leaves, the channel stays subscribed for a short grace
period (`IDLE_GRACE`) before the shell unsubscribes it: a lock taken in turn by
several owners would otherwise subscribe and unsubscribe on every hand-off, and the
waiter that just got the lock would wait for its UNSUBSCRIBE to be sent.

How many waiters a message wakes depends on what the channel announces (its
`WakeRule`, fixed when the channel is first subscribed; see `wake_count`): a
lock's unlock message wakes one waiter (it retries the lock; the others would only lose
the race), a read-write lock's write unlock wakes all, a semaphore's message as many as
permits became available, a latch's zero count all. A single wake-up goes to the waiter
asleep longest, and is its own; one that arrives while every waiter is busy retrying is
kept as a permit, capped at the number of waiters, so no signal is missed and none piles
up. A wake-all is a broadcast, not permits: each waiter
(`Waiter`) wakes once for each broadcast since it last woke, so a waiter that
wakes, retries and waits again cannot use up the wake-ups meant for the others. A
resubscription (failover, reconnect, slot move) wakes every waiter that way, since
messages may have been lost meanwhile.

The shells add the blocking part (a condition variable or an asyncio future per waiter)
and the connections; this module does no I/O and takes no lock of its own: the shells
call it under theirs.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redisson_py.config.addresses import Address
from redisson_py.core.effects import WakeRule

IDLE_GRACE = 1.0
"""Seconds a channel without waiters stays subscribed before it is unsubscribed."""

ALL = -1
"""`wake_count`'s answer for "wake every waiter"."""


def wake_count(rule: WakeRule, message: bytes | str | None) -> int:
    """How many waiters ``message`` on a channel with ``rule`` wakes (`ALL`: all).

    - ``lock``: ``0`` (an unlock) wakes one waiter; ``1`` (a read-write lock's write
      unlock, after which several readers may enter) wakes all.
    - ``permits``: the message is a number of permits (available now, or added): that
      many waiters, at most.
    - ``latch``: ``0`` (the count reached zero) wakes all; anything else (a new count)
      none.

    A message that is not a number wakes one waiter (lock) or none: it cannot say more.
    """
    text = message.decode() if isinstance(message, bytes) else str(message)
    try:
        value = int(text)
    except ValueError:
        return 1 if rule == "lock" else 0
    if rule == "lock":
        return ALL if value == 1 else 1
    if rule == "permits":
        return max(0, value)
    return ALL if value == 0 else 0


@dataclass(eq=False)
class ChannelSub:
    """The shared subscription to one channel."""

    channel: str
    waiters: int = 0
    address: Address | None = None
    """The node it is subscribed on; None until confirmed, or after that node failed."""
    permits: int = 0
    """Wake-ups that came while no waiter slept, kept for the next one to wait."""
    broadcasts: int = 0
    """How many wake-alls this channel has had (see `Waiter`)."""
    sleepers: deque[Waiter] = field(default_factory=deque)
    """The waiters asleep now, longest asleep first."""
    rule: WakeRule = "lock"
    """How many waiters a message wakes (see `wake_count`)."""
    idle_since: float | None = None
    """When the last waiter left (None while it has waiters)."""
    last_message: bytes | str | None = None
    """The last message that came on the channel (a queued lock's waiter reads the
    grant it names)."""

    def signal(self, count: int) -> list[Waiter]:
        """Hand ``count`` wake-ups to the waiters asleep longest, one each (`ALL`: a
        broadcast to every waiter); return the sleepers to wake.

        A wake-up no sleeper is there for is kept as a permit (capped at the number of
        waiters) for the next waiter that would sleep: it came while they were busy
        retrying. A wake-up handed to a sleeper is that sleeper's alone: a waiter that
        was just refused and waits again cannot take it, so the waiter asleep longest
        gets the next try (Redisson's latch lets any waiter take it: a task that
        releases and asks again would win most turns)."""
        if count == ALL:
            self.broadcasts += 1
            woken = list(self.sleepers)
            for waiter in woken:
                waiter.asleep = False
            self.sleepers.clear()
            return woken
        woken = []
        while count > 0 and self.sleepers:
            waiter = self.sleepers.popleft()
            waiter.asleep, waiter.granted = False, True
            woken.append(waiter)
            count -= 1
        if count > 0:
            self.permits = min(self.permits + count, max(self.waiters, 1))
        return woken

    def signal_all(self) -> list[Waiter]:
        """A broadcast (see `signal`)."""
        return self.signal(ALL)

    def take(self) -> bool:
        """Consume a permit if there is one."""
        if self.permits > 0:
            self.permits -= 1
            return True
        return False


@dataclass(eq=False, slots=True)
class Waiter:
    """One waiter's share of a `ChannelSub`: what it has been woken by. The shells
    call its methods under the subscription table's lock."""

    sub: ChannelSub
    handle: Any = None
    """The shell's wake-up primitive for this waiter."""
    seen: int = 0
    """The channel's broadcast count when this waiter last woke (or joined)."""
    granted: bool = False
    """A wake-up was handed to this waiter while it slept (see `ChannelSub.signal`)."""
    asleep: bool = False

    def __post_init__(self) -> None:
        self.seen = self.sub.broadcasts

    def woken(self) -> bool:
        """True, once, for a broadcast since this waiter last woke or a wake-up handed to
        it; else True when it took a kept permit; False when none is there (sleep)."""
        if self.sub.broadcasts != self.seen:
            self.seen = self.sub.broadcasts
            self.granted = False  # the retry a broadcast brings answers the wake-up too
            return True
        if self.granted:
            self.granted = False
            return True
        return self.sub.take()

    def sleep(self) -> None:
        """Queue up for a wake-up (call before sleeping, after `woken` said False)."""
        self.asleep = True
        self.sub.sleepers.append(self)

    def awake(self) -> None:
        """Leave the queue of sleepers (after sleeping; woken or timed out)."""
        if self.asleep:
            self.asleep = False
            with contextlib.suppress(ValueError):
                self.sub.sleepers.remove(self)

    def leave(self) -> list[Waiter]:
        """This waiter stops waiting: a wake-up handed to it and not used passes to the
        next sleeper (returned, to wake) or is kept, so no release goes unanswered."""
        self.awake()
        if not self.granted:
            return []
        self.granted = False
        return self.sub.signal(1)


class SubscriptionTable:
    """Channel -> `ChannelSub`, with waiter counting and placement checks."""

    def __init__(self) -> None:
        self._subs: dict[str, ChannelSub] = {}
        self._reconnecting: set[Address] = set()
        """Nodes whose connection failed and have not confirmed a subscription since."""

    def __len__(self) -> int:
        return len(self._subs)

    def get(self, channel: str) -> ChannelSub | None:
        return self._subs.get(channel)

    def join(self, channel: str, rule: WakeRule = "lock") -> tuple[ChannelSub, bool]:
        """Add a waiter to ``channel``; True when the channel is new (subscribe it).
        ``rule`` is the channel's wake rule (taken from its first waiter)."""
        sub = self._subs.get(channel)
        created = sub is None
        if sub is None:
            sub = ChannelSub(channel, rule=rule)
            self._subs[channel] = sub
        elif sub.waiters == 0:
            # Signals that came while nobody waited were meant for nobody: the new
            # waiter tries the lock once it has joined anyway.
            sub.permits, sub.idle_since = 0, None
        sub.waiters += 1
        return sub, created

    def leave(self, sub: ChannelSub, now: float) -> None:
        """Remove a waiter; the last one out leaves the channel idle (see the module)."""
        sub.waiters -= 1
        if sub.waiters <= 0:
            sub.waiters, sub.idle_since = 0, now

    def discard(self, sub: ChannelSub) -> None:
        """Forget ``sub`` at once (its subscription failed, or its node is gone)."""
        if self._subs.get(sub.channel) is sub:
            del self._subs[sub.channel]

    def expired(self, now: float, grace: float = IDLE_GRACE) -> list[ChannelSub]:
        """Remove and return the channels idle for ``grace`` seconds (unsubscribe them)."""
        gone = [
            s
            for s in self._subs.values()
            if s.idle_since is not None and now - s.idle_since >= grace
        ]
        for sub in gone:
            del self._subs[sub.channel]
        return gone

    def deliver(self, channel: str, message: bytes | str | None) -> list[Waiter]:
        """A message arrived on ``channel``: the sleepers to wake (none when nobody
        subscribes to it; see `ChannelSub.signal`)."""
        sub = self._subs.get(channel)
        if sub is None:
            return []
        sub.last_message = message
        return sub.signal(wake_count(sub.rule, message))

    def node_lost(self, address: Address) -> list[Waiter]:
        """``address``'s connection failed. Its channels without waiters are forgotten;
        the others lose their node (the next placement subscribes them where the view
        says) and get a wake-all, since messages may have been lost: wake the returned
        sleepers. `node_back` then says when it is back."""
        woken: list[Waiter] = []
        for sub in [s for s in self._subs.values() if s.address == address]:
            if sub.waiters == 0:
                self.discard(sub)
                continue
            sub.address = None
            woken += sub.signal_all()
        self._reconnecting.add(address)
        return woken

    def node_back(self, address: Address) -> bool:
        """A subscription on ``address`` was confirmed: True (once) when its connection
        had failed since (the node may have restarted and lost its keys)."""
        if address not in self._reconnecting:
            return False
        self._reconnecting.discard(address)
        return True

    def all(self) -> list[ChannelSub]:
        """Every subscription (a snapshot)."""
        return list(self._subs.values())

    def misplaced(self, placement: Callable[[str], Address | None]) -> list[ChannelSub]:
        """Subscriptions not on the node ``placement`` now names for their channel
        (orphaned by a failed node, or moved by a failover or a slot migration)."""
        return [s for s in self._subs.values() if s.address != placement(s.channel)]
