"""What the sync and asyncio connection managers share, with no I/O: the current view,
routing a call to its master, the reply timeout it needs, and batching calls per node.

The shells add sockets (send, receive), the refresh loop and the pub/sub service. See
`redisson_py.sync.manager` for why lock commands run on pinned connections rather
than through redis-py's cluster and sentinel clients.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from redisson_py.config.addresses import Address
from redisson_py.config.enums import LockSyncMode
from redisson_py.config.model import Config
from redisson_py.config.sections import BaseConfig
from redisson_py.core.effects import Call, Direct
from redisson_py.core.routing.modes import Mode, mode_for
from redisson_py.core.routing.topology import TopologyView
from redisson_py.core.routing.wire import Planned, TopologyChanged

log = logging.getLogger("redisson_py.connection")

REFRESH_THROTTLE = 0.05
"""Shortest gap between two refreshes asked for by errors, so a burst makes one."""

ROUTES_KEPT = 4096
"""Routes remembered per view (a lock name's master and replica count): a loop over a
few thousand locks looks each up once per view; more names start the memory afresh."""

Route = tuple[Address, int, bool]
"""(master, replicas a WAIT asks for, ask the master its replicas first?)."""

ConnectionKey = tuple[Address, float | None, bool]
"""(node, reply timeout or None for the default, sentinel?)."""


def _no_master(view: TopologyView, name: str) -> str:
    """Why a call on ``name`` cannot be routed in ``view``."""
    said = f"no master serves the slot of {name!r} right now"
    return f"{said}: {view.unavailable}" if view.unavailable else said


class ManagerBase:
    """Routing state of one client's connection manager."""

    def __init__(self, config: Config, mode: Mode | None = None):
        self.config = config
        self.mode = mode or mode_for(config)
        self.command_timeout = self.mode.section.timeout
        self._aof = config.lock_sync_mode == LockSyncMode.WAITAOF
        self._unreplicated_told: set[Address] = set()
        self._view: TopologyView = TopologyView.single_master(self.mode.seeds()[0])
        # The view and the routes worked out in it, swapped as one (see `plan`).
        self._routes: tuple[TopologyView, dict[str, Route]] = (self._view, {})

    @property
    def view(self) -> TopologyView:
        """The current topology view (startup and refreshes set it)."""
        return self._view

    @view.setter
    def view(self, new: TopologyView) -> None:
        self._view = new
        self._routes = (new, {})
        self._tell_unreplicated(new)

    def _tell_unreplicated(self, view: TopologyView) -> None:
        """Warn once per master that lock grants on it cannot be replicated (replica
        sync on, a replicated topology, and the master has no replica at all)."""
        if not self.config.check_lock_synced_slaves or self.mode.kind == "single":
            return
        for master in view.masters:
            if view.replicas_to_wait_for(master) == 0 and master not in self._unreplicated_told:
                self._unreplicated_told.add(master)
                log.warning("lock grants on %s are not replicated: it has no replica", master)

    @property
    def publish_command(self) -> str:
        """What the lock scripts publish with: SPUBLISH with sharded pub/sub."""
        return "spublish" if self.mode.sharded_pubsub else "publish"

    @property
    def routes_by_slot(self) -> bool:
        return self.mode.routes_by_slot

    def describe(self, name: str) -> str:
        """The master currently serving ``name``, for messages."""
        master = self.view.master_for(name)
        return str(master) if master is not None else "no master"

    def suspect(self, address: Address | None) -> None:
        """Something failed on ``address`` (None: a slot moved); the shells refresh soon."""

    def master_address(self, route: str) -> Address:
        master = self.view.master_for(route)
        if master is None:
            self.suspect(None)
            raise TopologyChanged(_no_master(self.view, route))
        return master

    def plan(self, effect: Call | Direct) -> Planned:
        """Where ``effect`` goes and what it sends: when the call asks for replica sync, a
        WAIT (or with ``lockSyncMode: WAITAOF`` a WAITAOF) for the replicas the view
        counts for that master (`TopologyView.replicas_to_wait_for`)."""
        if isinstance(effect, Direct):
            return Planned(effect, effect.address)
        # A route is worked out once per view: the view and its routes are read as one
        # pair, so a route found in an old view never lands among a new view's.
        view, routes = self._routes
        if view is not self.view:  # a manager that follows another's view (a twin)
            view, routes = self._routes = (self.view, {})
        route = routes.get(effect.route)
        if route is None:
            route = self._route(view, effect.route)
            if len(routes) >= ROUTES_KEPT:
                routes.clear()
            routes[effect.route] = route
        address, required, probe = route
        if effect.sync_replicas is None:
            return Planned(effect, address)
        return Planned(effect, address, required=required, aof=self._aof, probe=probe)

    def _route(self, view: TopologyView, name: str) -> Route:
        master = view.master_for(name)
        if master is None:
            self.suspect(None)
            raise TopologyChanged(_no_master(view, name))
        required = view.replicas_to_wait_for(master)
        # Replicas the view flags down are not waited for, but a flag can lag: a replica
        # back from a restart may be attached already, and promoted by a failover before
        # the view learns it. Then the master is asked (ROLE).
        probe = required < len(view.replicas.get(master, ()))
        return master, required, probe

    def pool_key(self, planned: Planned) -> ConnectionKey:
        effect = planned.effect
        timeout = effect.timeout
        if (planned.waits or planned.probe) and isinstance(effect, Call) and effect.sync_replicas:
            # The WAIT's own wait comes on top of the reply timeout.
            timeout = (timeout or self.command_timeout) + effect.sync_replicas
        sentinel = isinstance(effect, Direct) and effect.sentinel
        return planned.address, timeout, sentinel

    def group(
        self, effects: Sequence[Call | Direct]
    ) -> tuple[list[Any], dict[ConnectionKey, Group]]:
        """Plan ``effects`` and group them per connection pool (one round trip each).

        Returns the outcomes list, pre-filled with the error of each effect that could
        not be planned, and the `Group` of each pool.
        """
        outcomes: list[Any] = [None] * len(effects)
        groups: dict[ConnectionKey, Group] = {}
        for index, effect in enumerate(effects):
            try:
                planned = self.plan(effect)
            except Exception as error:
                outcomes[index] = error
                continue
            key = self.pool_key(planned)
            group = groups.get(key)
            if group is None:
                group = groups[key] = Group()
            group.add(index, planned)
        return outcomes, groups

    def apply_view(self, new: TopologyView | None) -> bool:
        """Swap in ``new`` (None: nothing answered, keep the old); True if it changed."""
        if new is None or new == self.view:
            return False
        old, self.view = self.view, new
        if old.masters != new.masters:
            log.info(
                "masters now %s (were %s)",
                ", ".join(map(str, new.masters)) or "none",
                ", ".join(map(str, old.masters)) or "none",
            )
        return True


class Group:
    """Calls sent together on one connection: their commands back to back, then their
    replies split back, in order, one share per call.

    Calls that ask for replica sync share one WAIT (or WAITAOF), sent after all the
    group's commands: a WAIT covers every write sent before it on its connection, so one
    per node confirms them all (a renewal round of many chunks, the members of a
    MultiLock on one master) at the cost of one replica acknowledgement, not one per call,
    which would add a sync timeout per call when replicas do not answer. Each waiting
    call's share ends with that WAIT's reply.
    """

    __slots__ = ("_wait", "_wire", "members")

    def __init__(self) -> None:
        self._wire: list[Any] = []
        self._wait: tuple[Any, ...] | None = None
        self.members: list[tuple[int, Planned, int]] = []
        """(index in the batch, plan, how many replies of its own it takes) per call."""

    @classmethod
    def of(cls, planned: Planned) -> Group:
        """A group of one call (to probe its master's replicas before sending it)."""
        group = cls()
        group.add(0, planned)
        return group

    @property
    def commands(self) -> list[Any]:
        """Every command the group sends, the shared WAIT last."""
        return self._wire if self._wait is None else [*self._wire, self._wait]

    @property
    def probes(self) -> bool:
        """Whether the master's attached replicas are to be asked first (``ROLE``)."""
        return any(planned.probe for _, planned, _ in self.members)

    def raise_required(self, attached: int) -> None:
        """The master has ``attached`` replicas attached now (its ``ROLE``): every call
        of the group that waits asks for at least that many acknowledgements, so a grant
        counts only if the replicas the master has now acknowledged it, whatever the
        view (see `probe`)."""
        for position, (index, planned, count) in enumerate(self.members):
            if planned.syncs and attached > planned.required:
                self.members[position] = (index, replace(planned, required=attached), count)
        waiting = [planned for _, planned, _ in self.members if planned.waits]
        if waiting:
            self._wait = max(waiting, key=lambda planned: planned.required).wait_command()

    def add(self, index: int, planned: Planned) -> None:
        wire = planned.commands(wait=False)
        self._wire.extend(wire)
        self.members.append((index, planned, len(wire)))
        if planned.waits:
            shared = self._wait
            # One WAIT for the most replicas any member asks for (the members share one
            # master, so they ask for the same number).
            if shared is None or planned.required > shared[-2]:
                self._wait = planned.wait_command()

    def fail(self, outcomes: list[Any], error: Exception) -> None:
        """The connection failed: ``error`` is every member's outcome."""
        for index, _, _ in self.members:
            outcomes[index] = error

    def shares(self, replies: list[Any]) -> Iterator[tuple[int, Planned, list[Any]]]:
        """(index, plan, its replies) for each member, from the group's ``replies``; a
        member that waits gets the shared WAIT's reply as its last."""
        offset = 0
        wait_reply = replies[-1:] if self._wait is not None else []
        for index, planned, count in self.members:
            share = replies[offset : offset + count]
            yield index, planned, share + wait_reply if planned.waits else share
            offset += count


def pool_size(section: BaseConfig) -> int:
    """Connections per node pool: ``connectionPoolSize`` (single server) or
    ``masterConnectionPoolSize`` (the other modes)."""
    for name in ("connection_pool_size", "master_connection_pool_size"):
        size = getattr(section, name, None)
        if isinstance(size, int):
            return size
    return 64
