"""The four connection modes: how each starts, refreshes and places keys and channels.

A `Mode` holds everything a connection manager needs to know about its topology
kind, as flows (startup, refresh) and pure functions (placement), so the sync and asyncio
managers share it and differ only in how they perform I/O:

- single server: one node owns every slot;
- master/slave: the configured master owns every slot, the configured replicas are
  pinged to know how many are healthy;
- sentinel: the sentinels name the master and its healthy replicas; refreshed every
  scan interval and at once on ``+switch-master``;
- replicated: every node is asked its ``ROLE`` every scan interval; the one master owns
  every slot, the others are its replicas (two masters at once: none, see
  `redisson_py.core.routing.replicated`);
- cluster: ``CLUSTER NODES`` gives the slot map and each shard's healthy replicas;
  refreshed every scan interval and after a MOVED.

Startup fails with [`ConnectError`][redisson_py.errors.ConnectError] listing every address tried
and why, or [`AuthError`][redisson_py.errors.AuthError] when a server refused the credentials.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Sequence
from typing import Any

from redis.exceptions import (
    AuthenticationError,
    AuthenticationWrongNumberOfArgsError,
    ResponseError,
)

from redisson_py.config.addresses import Address, parse_address
from redisson_py.config.enums import (
    LockSyncMode,
    ReadMode,
    ShardedSubscriptionMode,
    SubscriptionMode,
)
from redisson_py.config.model import Config
from redisson_py.config.sections import (
    BaseConfig,
    BaseMasterSlaveServersConfig,
    ClusterServersConfig,
    MasterSlaveServersConfig,
    ReplicatedServersConfig,
    SentinelServersConfig,
    SingleServerConfig,
)
from redisson_py.core.effects import Effect, Target
from redisson_py.core.routing.discovery import (
    Discovery,
    check_replicas,
    discover_cluster,
    discover_sentinel,
    ping_all,
    probe,
    read_master_counts,
)
from redisson_py.core.routing.replicated import discover_replicated
from redisson_py.core.routing.topology import NatMap, TopologyView
from redisson_py.errors import AuthError, ConfigError, ConnectError

ViewFlow = Generator[Effect, Any, TopologyView]
RefreshFlow = Generator[Effect, Any, TopologyView | None]

_AUTH_ERRORS = (AuthenticationError, AuthenticationWrongNumberOfArgsError)


def _raise_unreachable(
    what: str, discovery: Discovery, tried: Sequence[Address], user: str | None
) -> None:
    """Raise AuthError if any server refused the credentials, else ConnectError."""
    reasons = discovery.reasons()
    for address in tried:
        reasons.setdefault(str(address), "no answer")
    listing = "; ".join(f"{address}: {reason}" for address, reason in reasons.items())
    refused = [a for a, e in discovery.errors.items() if isinstance(e, _AUTH_ERRORS)]
    if refused:
        user = refused[0].username or user or "default"
        raise AuthError(
            f"authentication failed for {refused[0]} as user {user!r}: check the username "
            f"and password in the config ({listing})",
            reasons,
        )
    raise ConnectError(f"cannot reach {what}: {listing}", reasons)


def _redis_major(info: Any) -> int:
    text = info.decode() if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith("redis_version:"):
            return int(line.split(":", 1)[1].split(".")[0])
    return 0


def _info_field(info: Any, name: str) -> str | None:
    text = info.decode() if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        key, _, value = line.strip().partition(":")
        if key == name:
            return value
    return None


def check_waitaof(
    target: Target, view: TopologyView, timeout: float
) -> Generator[Effect, Any, None]:
    """With ``lockSyncMode: WAITAOF``, check every master and known replica can confirm
    an fsync: the server has WAITAOF (Redis >= 7.2, Valkey) and ``appendonly yes``.

    Raises [`ConfigError`][redisson_py.errors.ConfigError] naming the first node that cannot;
    a replica that does not answer now is not checked (it is checked by no one later:
    its WAITAOF acknowledgements will simply be missing, and grants refused).
    """
    nodes = list(view.masters)
    for master in view.masters:
        nodes.extend(view.replicas.get(master, ()))
    commands = (("COMMAND", "INFO", "WAITAOF"), ("INFO", "persistence"))
    answers = yield from probe(target, list(dict.fromkeys(nodes)), commands, timeout)
    for node, reply in answers.items():
        if isinstance(reply, BaseException):
            if node in view.masters:
                raise ConnectError(f"cannot check WAITAOF support on master {node}: {reply}")
            continue
        command_info, persistence = reply
        if not command_info or command_info[0] is None:
            raise ConfigError(
                f"lockSyncMode WAITAOF: {node} has no WAITAOF command (it needs Redis 7.2 "
                "or later, or Valkey); use lockSyncMode: WAIT",
                path="lockSyncMode",
            )
        if _info_field(persistence, "aof_enabled") != "1":
            raise ConfigError(
                f"lockSyncMode WAITAOF: {node} runs with appendonly no, so it can never "
                "confirm an fsync; set appendonly yes on every node or use lockSyncMode: WAIT",
                path="lockSyncMode",
            )


def check_wait(target: Target, view: TopologyView, timeout: float) -> Generator[Effect, Any, None]:
    """With replica sync on (``lockSyncMode: WAIT``), check every master and known
    replica runs ``WAIT``: a server where it is renamed away, refused by an ACL or a
    proxy, would fail every grant after applying it.

    ``WAIT 0 0`` returns at once on a master; a replica answers it with an error of its
    own ("cannot be used with replica instances"), which shows the command is there. Raises
    [`ConfigError`][redisson_py.errors.ConfigError] naming the first node that refuses
    it and the setting; a node that does not answer now is not checked (a grant whose
    WAIT fails later is undone and raises
    [`NoSyncedReplicasError`][redisson_py.errors.NoSyncedReplicasError]).
    """
    nodes = list(view.masters)
    for master in view.masters:
        nodes.extend(view.replicas.get(master, ()))
    answers = yield from probe(target, list(dict.fromkeys(nodes)), (("WAIT", "0", "0"),), timeout)
    for node, reply in answers.items():
        if not isinstance(reply, ResponseError) or "replica" in str(reply).lower():
            continue
        raise ConfigError(
            f"checkLockSyncedSlaves: {node} cannot run WAIT ({reply}), so no grant could be"
            " confirmed by its replicas; enable WAIT on every node, or set"
            " checkLockSyncedSlaves: false (then a failover may lose a lock)",
            path="checkLockSyncedSlaves",
        )


class Mode:
    """What a manager needs to know about one topology kind; subclasses per kind."""

    kind = "single"
    routes_by_slot = False
    sharded_pubsub = False

    def __init__(self, section: BaseConfig, config: Config):
        self.section = section
        self.config = config
        self._round_robin = itertools.count()

    @property
    def scan_interval(self) -> float | None:
        """Seconds between refreshes; None: the topology never changes under us."""
        return None

    @property
    def probe_timeout(self) -> float:
        return self.section.timeout

    def seeds(self) -> list[Address]:
        """The configured addresses, for messages and first contact."""
        raise NotImplementedError

    def startup(self, target: Target) -> ViewFlow:
        raise NotImplementedError

    def checked(self, target: Target, view: TopologyView) -> ViewFlow:
        """``view``, once the nodes are checked to support the configured lock sync
        mode (see `check_waitaof`); the end of every startup."""
        config = self.config
        if config.check_lock_synced_slaves and config.lock_sync_mode == LockSyncMode.WAITAOF:
            yield from check_waitaof(target, view, self.probe_timeout)
        elif config.check_lock_synced_slaves and self.kind != "single":
            # A single server has no replica: no WAIT is ever sent to it.
            yield from check_wait(target, view, self.probe_timeout)
        return view

    def refresh(self, target: Target, view: TopologyView) -> RefreshFlow:
        """Read the topology again; None when nothing answered (keep the old view)."""
        yield from ()
        return None

    def pubsub_address(self, view: TopologyView, channel: str) -> Address | None:
        """The node to subscribe ``channel`` on: its master, or a replica of it when
        ``subscriptionMode`` is SLAVE and there is one."""
        master = view.master_for(channel)
        if master is None:
            return None
        mode = getattr(self.section, "subscription_mode", SubscriptionMode.MASTER)
        replicas = view.replicas.get(master, ())
        if mode == SubscriptionMode.SLAVE and replicas:
            return replicas[0]
        return master

    def read_address(self, view: TopologyView, key: str) -> Address | None:
        """The node a read of ``key`` goes to, by ``readMode`` (locks always read their
        own state from the master: a replica may lag behind a grant)."""
        master = view.master_for(key)
        if master is None:
            return None
        mode = getattr(self.section, "read_mode", ReadMode.MASTER)
        replicas = list(view.replicas.get(master, ()))
        if mode == ReadMode.SLAVE and replicas:
            return replicas[next(self._round_robin) % len(replicas)]
        if mode == ReadMode.MASTER_SLAVE:
            choices = [master, *replicas]
            return choices[next(self._round_robin) % len(choices)]
        return master


class SingleMode(Mode):
    kind = "single"

    def __init__(self, section: SingleServerConfig, config: Config):
        super().__init__(section, config)
        assert section.address is not None
        self.address = parse_address(section.address)

    def seeds(self) -> list[Address]:
        return [self.address]

    def startup(self, target: Target) -> ViewFlow:
        discovery = yield from ping_all(target, [self.address], self.probe_timeout)
        if discovery.errors:
            _raise_unreachable("the Redis server", discovery, [self.address], self.section.username)
        return (yield from self.checked(target, TopologyView.single_master(self.address)))


class MasterSlaveMode(Mode):
    kind = "master_slave"

    def __init__(self, section: MasterSlaveServersConfig, config: Config):
        super().__init__(section, config)
        assert section.master_address is not None
        self.master = parse_address(section.master_address)
        self.replicas = [parse_address(a) for a in section.slave_addresses]

    @property
    def scan_interval(self) -> float | None:
        assert isinstance(self.section, BaseMasterSlaveServersConfig)
        return self.section.failed_slave_reconnection_interval if self.replicas else None

    def seeds(self) -> list[Address]:
        return [self.master, *self.replicas]

    def startup(self, target: Target) -> ViewFlow:
        discovery = yield from ping_all(target, [self.master], self.probe_timeout)
        if discovery.errors:
            _raise_unreachable("the master", discovery, [self.master], self.section.username)
        checked = yield from check_replicas(target, self.master, self.replicas, self.probe_timeout)
        assert checked.view is not None
        return (yield from self.checked(target, checked.view))

    def refresh(self, target: Target, view: TopologyView) -> RefreshFlow:
        checked = yield from check_replicas(target, self.master, self.replicas, self.probe_timeout)
        return checked.view


class _ScanningMode(Mode):
    """Sentinel and cluster: the topology is read from the nodes every scan interval,
    and the addresses they announce go through the NAT map."""

    def __init__(self, section: SentinelServersConfig | ClusterServersConfig, config: Config):
        super().__init__(section, config)
        self._scan_interval = section.scan_interval
        nat = section.nat_mapper
        self.nat: NatMap = nat.map if nat is not None else (lambda h, p: (h, p))

    @property
    def scan_interval(self) -> float | None:
        return self._scan_interval


class SentinelMode(_ScanningMode):
    kind = "sentinel"

    def __init__(self, section: SentinelServersConfig, config: Config):
        super().__init__(section, config)
        assert section.master_name is not None
        self.section: SentinelServersConfig = section
        self.master_name = section.master_name
        self.sentinels = [parse_address(a) for a in section.sentinel_addresses]
        # Data nodes take the sentinels' scheme (rediss for TLS) and the section's
        # credentials, which the connection options add.
        first = self.sentinels[0]
        self.data_template = Address(first.scheme, first.host, first.port)
        self._replicas_seen: dict[Address, int] = {}

    def seeds(self) -> list[Address]:
        return list(self.sentinels)

    def _discover(self, target: Target) -> Generator[Effect, Any, Discovery]:
        """Ask every known sentinel; with ``sentinelsDiscovery`` add the sentinels they
        name to the known ones (asked from the next discovery on)."""
        discovery = yield from discover_sentinel(
            target,
            self.sentinels,
            self.master_name,
            self.data_template,
            nat=self.nat,
            require_link_ok=self.section.check_slave_status_with_syncing,
            timeout=self.probe_timeout,
            remembered=self._replicas_seen,
        )
        if self.section.sentinels_discovery:
            known = {a.host_port for a in self.sentinels}
            for report in discovery.reports.values():
                for sentinel in report.sentinels:
                    if sentinel.host_port not in known:
                        known.add(sentinel.host_port)
                        self.sentinels.append(sentinel)
        return discovery

    def startup(self, target: Target) -> ViewFlow:
        tried = list(self.sentinels)
        discovery = yield from self._discover(target)
        if len(self.sentinels) > len(tried):
            # Newly discovered sentinels are asked too, so the count below is of
            # sentinels that answered, as Redisson counts them.
            tried = list(self.sentinels)
            discovery = yield from self._discover(target)
        if discovery.view is None:
            what = f"any sentinel that knows master {self.master_name!r}"
            if discovery.reports and not discovery.errors:
                raise ConnectError(
                    f"no sentinel knows a master named {self.master_name!r} "
                    f"(asked {', '.join(str(a) for a in tried)}); check masterName"
                )
            _raise_unreachable(what, discovery, tried, self.section.sentinel_username)
        assert discovery.view is not None
        answering = sorted(a.host_port for a in discovery.reports)
        if self.section.check_sentinels_list and len(answering) < 2:
            silent = "; ".join(f"{a}: {r}" for a, r in discovery.reasons().items())
            raise ConnectError(
                f"only {len(answering)} sentinel of master {self.master_name!r} answered "
                f"({', '.join(answering)}); at least two must, or no failover can happen"
                + (f" (no answer from {silent})" if silent else "")
                + ". Set checkSentinelsList: false to allow a single sentinel.",
                discovery.reasons(),
            )
        master = discovery.view.masters[0]
        pinged = yield from ping_all(target, [master], self.probe_timeout)
        if pinged.errors:
            what = f"master {self.master_name!r}"
            _raise_unreachable(what, pinged, [master], self.section.username)
        return (yield from self.checked(target, discovery.view))

    def refresh(self, target: Target, view: TopologyView) -> RefreshFlow:
        """The sentinels' view; when none answers (this client may be cut off with the
        master), the last view counting every replica it names, flagged down or not,
        raised to what the master itself lists: see
        `TopologyView.counting_every_replica`. Found by the randomized nemesis: a
        replica killed (flagged down), restarted, then a partition that left the client
        with the master and the sentinels with the replica, which they promoted before it
        had the grants made meanwhile; the client, unable to refresh, went on granting
        with no replica to wait for."""
        discovery = yield from self._discover(target)
        if discovery.view is not None or discovery.reports:
            return discovery.view
        stale = view.counting_every_replica()
        return (yield from read_master_counts(target, stale, self.probe_timeout))


class ClusterMode(_ScanningMode):
    kind = "cluster"
    routes_by_slot = True

    def __init__(self, section: ClusterServersConfig, config: Config):
        super().__init__(section, config)
        self.section: ClusterServersConfig = section
        self.nodes = [parse_address(a) for a in section.node_addresses]

    def seeds(self) -> list[Address]:
        return list(self.nodes)

    def startup(self, target: Target) -> ViewFlow:
        discovery = yield from discover_cluster(target, self.nodes, self.nat, self.probe_timeout)
        if discovery.view is None:
            _raise_unreachable("any cluster node", discovery, self.nodes, self.section.username)
        view = discovery.view
        assert view is not None
        gaps = view.uncovered_ranges()
        if gaps and self.section.check_slots_coverage:
            ranges = ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in gaps)
            raise ConnectError(
                f"the cluster does not serve every hash slot (uncovered: {ranges}); "
                "fix the cluster or set checkSlotsCoverage: false"
            )
        mode = self.section.sharded_subscription_mode
        if mode == ShardedSubscriptionMode.ON:
            self.sharded_pubsub = True
        elif mode == ShardedSubscriptionMode.AUTO and view.masters:
            first = view.masters[0]
            answers = yield from probe(target, [first], (("INFO", "server"),), self.probe_timeout)
            info = answers[first]
            self.sharded_pubsub = not isinstance(info, BaseException) and _redis_major(info[0]) >= 7
        return (yield from self.checked(target, view))

    def refresh(self, target: Target, view: TopologyView) -> RefreshFlow:
        # Ask the known masters first (they answer with the freshest view), then the
        # replicas, then the configured seeds.
        candidates = [*view.masters]
        for replicas in view.replicas.values():
            candidates.extend(replicas)
        candidates.extend(self.nodes)
        discovery = yield from discover_cluster(target, candidates, self.nat, self.probe_timeout)
        return discovery.view


class ReplicatedMode(Mode):
    kind = "replicated"

    def __init__(self, section: ReplicatedServersConfig, config: Config):
        super().__init__(section, config)
        self.section: ReplicatedServersConfig = section
        self.nodes = [parse_address(a) for a in section.node_addresses]
        self._replicas_seen: dict[Address, int] = {}

    @property
    def scan_interval(self) -> float | None:
        return self.section.scan_interval

    def seeds(self) -> list[Address]:
        return list(self.nodes)

    def startup(self, target: Target) -> ViewFlow:
        """The view, once exactly one node says it is master; raises
        [`ConnectError`][redisson_py.errors.ConnectError] naming every node and its
        role or error otherwise (or [`AuthError`][redisson_py.errors.AuthError])."""
        discovery, roles = yield from discover_replicated(
            target, self.nodes, self.probe_timeout, self._replicas_seen
        )
        if not roles:
            what = "any node of nodeAddresses"
            _raise_unreachable(what, discovery, self.nodes, self.section.username)
        view = discovery.view
        assert view is not None
        if not view.masters:
            reasons = {str(a): f"role {r.role}" for a, r in roles.items()}
            reasons.update(discovery.reasons())
            raise ConnectError(f"replicatedServersConfig: {view.unavailable}", reasons)
        return (yield from self.checked(target, view))

    def refresh(self, target: Target, view: TopologyView) -> RefreshFlow:
        discovery, _ = yield from discover_replicated(
            target, self.nodes, self.probe_timeout, self._replicas_seen
        )
        return discovery.view


def mode_for(config: Config) -> Mode:
    """The mode of ``config``'s topology section (the config must be valid), with the
    top-level credentials and TLS settings applied to it."""
    section = config.effective_server_config()
    match section:
        case SingleServerConfig():
            return SingleMode(section, config)
        case SentinelServersConfig():
            return SentinelMode(section, config)
        case ClusterServersConfig():
            return ClusterMode(section, config)
        case MasterSlaveServersConfig():
            return MasterSlaveMode(section, config)
        case ReplicatedServersConfig():
            return ReplicatedMode(section, config)
    raise TypeError(f"unsupported server config {type(section).__name__}")
