"""The requests a lock algorithm makes of the outside world.

Lock algorithms in `redisson_py.core` are generators: they yield one of the effects
below, and the shell that drives them (threads in `redisson_py.sync`, tasks in
`redisson_py.asyncio`) performs it and sends back the outcome, or throws the error
into the generator. The algorithms therefore exist once, never touch a socket, and can be
stepped through without Redis; the shells only know how to perform these few requests.

Outcomes, per effect:

=================  ===========================================================
`Call`             `CallResult`; raises on connection errors, timeouts and error
                   replies
`Direct`           the tuple of replies; raises likewise
`Gather`           ``list[CallResult | Exception]``, one per call, in order;
                   never raises for a call's failure
`Subscribe`        a subscription handle; raises if not confirmed in time
`Unsubscribe`      None
`WaitSignal`       True when a signal woke the waiter, False when ``timeout``
                   passed first
`Sleep`            None
=================  ===========================================================
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Arg = str | int | float | bytes


def to_millis(seconds: float) -> int:
    """Seconds to whole milliseconds for Redis (PEXPIRE, WAIT, script arguments), never
    below 1: 0 would delete a key, or make a WAIT wait for ever. The one conversion the
    core makes; every duration in the core is in seconds until it is sent."""
    return max(1, round(seconds * 1000))


@dataclass(frozen=True)
class Script:
    """A Lua script and its SHA1, as Redis's script cache names it. The scripts
    themselves live in `redisson_py.core.scripts`."""

    name: str
    source: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.source.encode()).hexdigest())


WakeRule = Literal["lock", "permits", "latch"]
"""What a channel's messages announce (Redisson's ``LockPubSub``, ``SemaphorePubSub``
and ``CountDownLatchPubSub``): see `redisson_py.core.routing.subscriptions.wake_count`."""


@dataclass(frozen=True, slots=True)
class ScriptCommand:
    """One script invocation; sent as EVALSHA, re-sent as EVAL on NOSCRIPT."""

    script: Script
    keys: tuple[str, ...]
    args: tuple[Arg, ...]

    def evalsha(self) -> tuple[Arg, ...]:
        return ("EVALSHA", self.script.sha, len(self.keys), *self.keys, *self.args)

    def eval(self) -> tuple[Arg, ...]:
        return ("EVAL", self.script.source, len(self.keys), *self.keys, *self.args)


class Target(Protocol):
    """What a `Call`, `Direct` or `Subscribe` is aimed at: one
    shell's connection manager (`redisson_py.asyncio.manager` and its generated
    threaded twin). The flows read the first three members and `listens`; the drivers
    call the others, which are coroutine functions in the asyncio shell (hence
    ``Any``)."""

    @property
    def publish_command(self) -> str:
        """``PUBLISH``, or ``SPUBLISH`` where channels are sharded."""

    @property
    def routes_by_slot(self) -> bool:
        """True in cluster mode: keys and channels are placed by hash slot."""

    def describe(self, name: str) -> str:
        """The address of the node serving ``name`` now, for error messages."""

    def execute(self, effect: Call | Direct) -> Any:
        """Run one call: a `CallResult`, or the tuple of a `Direct`'s replies."""

    def start(self, effects: Sequence[Call | Direct]) -> Any:
        """Send ``effects`` now; the batch returned reads them in ``finish()``."""

    def subscribe(self, channel: str, timeout: float, rule: WakeRule, live_only: bool) -> Any:
        """Join the subscription to ``channel``: a subscription with ``wait``/``close``
        (None for ``live_only`` when it is not live); ``rule`` says how many waiters a
        message wakes."""

    def listens(self, channel: str) -> bool:
        """True when this client's subscription to ``channel`` is live (subscribed and
        confirmed on its node): a hint read without a lock, so that an uncontended
        acquire yields no effect for it; `Subscribe` with ``live_only`` decides."""


Command = ScriptCommand | tuple[Arg, ...]
"""A script invocation, or a plain command as its arguments (``("PTTL", name)``)."""


# Call and CallResult are made on every round trip: not frozen, as a frozen dataclass
# costs a microsecond more per object (a guarded setattr per field). Never mutated.
@dataclass(slots=True)
class Call:
    """Run ``commands`` in order, on one connection to the master owning ``route``.

    ``target`` is the connection manager (sync or asyncio) that knows the nodes; the core
    never looks inside it. With ``sync_replicas`` the manager appends ``WAIT`` for the
    replicas its topology view counts as healthy, on the same connection, so the reply
    says how many saw the writes. ``timeout`` bounds the wait for the replies (None: the
    configured command timeout).
    """

    target: Target
    route: str
    commands: tuple[Command, ...]
    sync_replicas: float | None = None
    timeout: float | None = None


@dataclass(slots=True)
class CallResult:
    """Replies of a `Call`, one per command, decoded by redis-py's parser.

    ``required`` is the number of replicas a ``WAIT`` asked for (0: none was sent) and
    ``synced`` how many acknowledged. ``wait_error``: the error reply of a ``WAIT`` (or
    ``WAITAOF``) that failed after the commands ran (then ``synced`` is -1, below any
    requirement, so the write is undone), else empty.
    """

    replies: tuple[Any, ...]
    required: int = 0
    synced: int = 0
    address: str = ""
    wait_error: str = ""


@dataclass(frozen=True, slots=True)
class Gather:
    """Run several calls concurrently (members of a MultiLock or RedLock, renewals,
    topology probes); calls to the same node share a round trip."""

    calls: tuple[Call | Direct, ...]


@dataclass(frozen=True, slots=True)
class Subscribe:
    """Join the shared subscription to ``channel`` on the node that serves it.
    ``rule`` says how many of the channel's waiters one message wakes (see
    `redisson_py.core.routing.subscriptions.wake_count`). ``live_only``: join only a
    subscription this client has live already (subscribed and confirmed on its node),
    so every message published from now on reaches the waiter; else change nothing and
    give None."""

    target: Target
    channel: str
    timeout: float
    rule: WakeRule = "lock"
    live_only: bool = False


@dataclass(frozen=True, slots=True)
class Unsubscribe:
    """Leave a subscription; the last one out unsubscribes the channel."""

    subscription: Any


@dataclass(frozen=True, slots=True)
class WaitSignal:
    """Sleep until a signal on ``subscription`` wakes this waiter, or ``timeout``.

    A message on the channel wakes as many waiters of the subscription as its wake rule
    says (a lock's unlock: one, which retries the lock; waking all would only make the
    others lose the race); a signal that comes while every waiter is busy retrying is
    kept for the next one to wait, so none is missed. A resubscription after a failover
    or a reconnect wakes every waiter.
    """

    subscription: Any
    timeout: float


@dataclass(frozen=True, slots=True)
class Sleep:
    """Sleep for ``seconds``."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Background:
    """Run ``flow`` on its own (a daemon thread, or a task on the client's loop) and go
    on at once: clean-up that must not hold up the caller's deadline, such as undoing an
    acquire whose outcome is unknown while its node is unreachable. The flow must not
    raise; what it returns is ignored."""

    flow: Any
    name: str = "redisson-py-background"


@dataclass(frozen=True, slots=True)
class Direct:
    """Run ``commands`` on the node at ``address`` itself, with no routing or redirects.

    For topology discovery and health checks. ``sentinel`` selects the connections to
    sentinels (their own credentials) rather than to data nodes. The outcome is the
    tuple of replies; errors raise, as for `Call`.
    """

    target: Target
    address: Any
    commands: tuple[Command, ...]
    timeout: float | None = None
    sentinel: bool = False


Effect = Call | Direct | Gather | Subscribe | Unsubscribe | WaitSignal | Sleep | Background


def by_target(calls: tuple[Call | Direct, ...]) -> list[tuple[Any, list[int]]]:
    """Group the calls of a `Gather` by their manager: (target, indexes) pairs,
    in first-seen order. Each manager sends its share on one connection per node."""
    groups: dict[int, tuple[Any, list[int]]] = {}
    for index, call in enumerate(calls):
        groups.setdefault(id(call.target), (call.target, []))[1].append(index)
    return list(groups.values())
