"""The topology sections: one dataclass per Redisson server config.

Attributes are the snake_case of Redisson's YAML keys. **Times are seconds (float) in
Python and milliseconds in YAML**, as Redisson writes them; the exceptions are stated on
the attribute (``tcp_keep_alive_idle``/``_interval`` are whole seconds in both). Defaults
are Redisson's. Assigning a ``str`` to a password attribute stores a
[`Secret`][redisson_py.config.Secret], and an enum attribute takes the member or its
name.

Types are checked by [`Config.validate`][redisson_py.config.Config.validate]; numbers
are also range-checked on assignment. Bounds: every time is at most 1 day (86400 s; YAML
86400000 ms) and, when 0 is not allowed, at least 1 ms; ``retry_attempts`` 0..1000; the
pool sizes redisson-py uses (``connection_pool_size``, ``master_connection_pool_size``)
at most 10000, redisson-py's own limit (the threaded client's redis-py pool reserves a
slot per connection up front; Redisson has no such limit); other integers at most
2**31 - 1. A time set in Python above 10 minutes (``timeout``, ``connect_timeout``,
``subscription_timeout``) or 1 hour (the others), or in YAML below 100 ms, is accepted
with a `ConfigUnitWarning` (likely seconds/milliseconds mixed up).

Settings listed in a section's ``NO_EFFECT`` are read and checked but change nothing in
redisson-py; a YAML file that sets one to a value other than its default draws a
`ConfigWarning` saying why.
"""

# setting() returns a dataclasses.Field (with the setting's kind as metadata), not a value.
# ruff: noqa: RUF009

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from redisson_py.config.addresses import Address, parse_address
from redisson_py.config.delays import DelayStrategy, EqualJitterDelay
from redisson_py.config.enums import (
    ReadMode,
    ShardedSubscriptionMode,
    SslVerificationMode,
    SubscriptionMode,
)
from redisson_py.config.kinds import (
    AddressKind,
    AddressList,
    Bool,
    EnumKind,
    FileKind,
    Int,
    Millis,
    SecretKind,
    Str,
    setting,
)
from redisson_py.config.kinds.tagged import DelayKind, NatKind
from redisson_py.config.nat import NatMapper
from redisson_py.config.schema import OWNER_KEYS, Settings
from redisson_py.config.secret import Secret

_POOL_MAX = 10_000
"""Largest connection pool redisson-py opens: the threaded client's redis-py
``BlockingConnectionPool`` fills a queue with one slot per allowed connection when it is
made, so Redisson's unbounded sizes (``connectionPoolSize: 2147483647``) would cost
memory up front. Far above what one client uses."""
_POOL_WHY = (
    "redisson-py's own limit, not Redisson's: the threaded client's redis-py pool reserves "
    "a slot per connection up front"
)

_NO_IDLE = "connections are opened when a command needs one; none are opened ahead"
_ONE_PUBSUB = "pub/sub uses one connection per node, shared by every subscription"
NO_EFFECT_BASE: dict[str, str] = {
    "idle_connection_timeout": "idle pooled connections stay open until the client shuts down",
    "reconnection_delay": "a dropped connection is reopened by the next command that needs "
    "it (retries wait retryDelay); pub/sub connections are reopened at once",
    "subscriptions_per_connection": _ONE_PUBSUB,
    "subscription_connection_pool_size": _ONE_PUBSUB,
    "subscription_connection_minimum_idle_size": _ONE_PUBSUB,
}
"""Settings of every section that are checked but read by nothing, and why."""

_IGNORED_WHY: dict[str, str] = {
    "sslProvider": "Java's choice of TLS engine; Python has one",
    "sslKeystoreType": "redisson-py reads PEM files only",
    "sslTruststorePassword": "a PEM CA bundle has no password",
    "sslProtocols": "Java's protocol names; Python's ssl module picks the protocol",
    "sslCiphers": "Java cipher names differ from OpenSSL's",
    "sslTrustManagerFactory": "a Java class",
    "sslKeyManagerFactory": "a Java class",
    "credentialsResolver": "a Java class; for credentials that rotate, give a provider in "
    "code: Config.set_credential_provider() (redis-py's CredentialProvider protocol)",
    "commandMapper": "a Java class",
    "loadBalancer": "replicas serve no lock reads here",
    "failedSlaveCheckInterval": "deprecated in Redisson",
    "failedSlaveNodeDetector": "a Java class",
    "fallbackLoadingToMaster": "replicas serve no lock reads here",
    "dnsMonitoringTimes": "a move is acted on at the first resolution that shows it",
    "registrationKey": "Redisson PRO's licence key",
    "codec": "lock data has a fixed format, written without a codec",
}


def ignored_why(key: str) -> str:
    """Why the Redisson key ``key`` (one of a class's ``IGNORED_KEYS``) is ignored."""
    why = _IGNORED_WHY.get(key, "Java-only: threads, Netty, codecs or Java classes")
    return f"ignored ({why})"


REMOVED_BASE: dict[str, tuple[str, str]] = {
    "pingTimeout": ("3.12.4", "pings use timeout"),
    "reconnectionTimeout": ("3.12.4", "see failedSlaveReconnectionInterval"),
    "failedAttempts": ("3.12.4", "see failedSlaveCheckInterval"),
    "slaveSubscriptionConnectionPoolSize": ("3.12.4", "now subscriptionConnectionPoolSize"),
    "slaveSubscriptionConnectionMinimumIdleSize": (
        "3.12.4",
        "now subscriptionConnectionMinimumIdleSize",
    ),
}
"""Keys Redisson removed: the Redisson version that dropped each, and what replaced it."""
_TIMEOUT_SPAN = (0.1, 600.0)
"""Plausible command timeouts (seconds); outside it a unit slip is likelier."""

_SSL_IGNORED = frozenset(
    {
        "sslProvider",  # Java's JDK vs OpenSSL engines; Python has one
        "sslKeystoreType",  # JKS/PKCS12: redisson-py reads PEM files
        "sslTruststorePassword",  # a PEM CA bundle has no password
        "sslProtocols",
        "sslCiphers",  # Java cipher names differ from OpenSSL's
        "sslTrustManagerFactory",
        "sslKeyManagerFactory",
    }
)


@dataclass(kw_only=True, eq=True, repr=False)
class BaseConfig(Settings):
    """Settings every topology shares (Redisson's ``BaseConfig``)."""

    IGNORED_KEYS: ClassVar[frozenset[str]] = _SSL_IGNORED | {
        "credentialsResolver",
        "commandMapper",
    }
    REMOVED_KEYS: ClassVar[dict[str, tuple[str, str]]] = REMOVED_BASE
    NO_EFFECT: ClassVar[dict[str, str]] = {
        k: v
        for k, v in NO_EFFECT_BASE.items()
        if k in ("idle_connection_timeout", "reconnection_delay", "subscriptions_per_connection")
    }
    LEGACY_KEYS: ClassVar[frozenset[str]] = frozenset(
        {"retryInterval", "sslEnableEndpointIdentification"}
    )

    idle_connection_timeout: float = setting(Millis(), 10.0)
    """Redisson: seconds a pooled connection may sit idle before it is closed. No effect in
    redisson-py (the YAML reference says why)."""
    connect_timeout: float = setting(Millis(positive=True, plausible=_TIMEOUT_SPAN), 10.0)
    """Seconds to establish a connection (redis-py ``socket_connect_timeout``)."""
    timeout: float = setting(Millis(positive=True, plausible=_TIMEOUT_SPAN), 3.0)
    """Seconds to wait for a reply once a command is sent (redis-py ``socket_timeout``)."""
    subscription_timeout: float = setting(Millis(positive=True, plausible=_TIMEOUT_SPAN), 7.5)
    """Seconds to wait for a (un)subscribe to be confirmed."""
    retry_attempts: int = setting(Int(0, 1000), 4)
    """Times a failed command is retried (0 = no retry). The executor owns retries."""
    retry_delay: DelayStrategy = setting(DelayKind(), EqualJitterDelay(1.0, 2.0))
    """Delay before each retry. YAML ``retryDelay``; the legacy ``retryInterval: 1500`` (ms)
    reads as ``ConstantDelay(1.5)``."""
    reconnection_delay: DelayStrategy = setting(DelayKind(), EqualJitterDelay(0.1, 10.0))
    """Redisson: delay before each reconnection attempt to a node that dropped. No effect
    in redisson-py (the YAML reference says why)."""
    username: str | None = setting(Str(), None)
    """ACL user name (Redis 6+). ``None`` means the default user."""
    password: Secret | None = setting(SecretKind(), None)
    """Password (a ``str`` is stored as a [`Secret`][redisson_py.config.Secret]). Never
    shown in reprs or errors."""
    subscriptions_per_connection: int = setting(Int(1), 5)
    """Redisson: channels subscribed through one pub/sub connection. No effect in
    redisson-py (the YAML reference says why)."""
    client_name: str | None = setting(Str(), None)
    """Sent with ``CLIENT SETNAME`` on every connection."""
    ssl_verification_mode: SslVerificationMode = setting(
        EnumKind(SslVerificationMode), SslVerificationMode.STRICT
    )
    """How ``rediss://`` servers are checked: NONE, CA_ONLY (chain, not host name), STRICT."""
    ssl_truststore: str | None = setting(FileKind(), None)
    """Path of a PEM bundle of trusted CA certificates (YAML: a ``file:`` URL or a path).
    ``None``: the system's trust store."""
    ssl_keystore: str | None = setting(FileKind(), None)
    """Path of the client certificate (PEM) for mutual TLS; may also hold the private key."""
    ssl_keystore_password: Secret | None = setting(SecretKind(), None)
    """Password of the client's private key, if it is encrypted."""
    ssl_private_key: str | None = setting(FileKind(), None, write_default=False)
    """**redisson-py extension** (YAML ``sslPrivateKey``; Redisson has no such key): path of
    the client's private key (PEM) when it is not inside ``ssl_keystore``."""
    ping_connection_interval: float = setting(Millis(), 30.0)
    """Seconds between health-check PINGs (0 = off): a pooled connection idle that long is
    PINGed before its next command (redis-py ``health_check_interval``), and a pub/sub
    connection that heard nothing that long is PINGed and, unanswered within ``timeout``,
    dropped and its channels subscribed again."""
    keep_alive: bool = setting(Bool(), False)
    """TCP keep-alive on connections. The top-level ``Config.tcp_keep_alive`` (Redisson's
    newer spelling, on by default) also turns it on."""
    tcp_keep_alive_count: int = setting(Int(0), 0)
    """Keep-alive probes before the connection is dropped (0 = system default)."""
    tcp_keep_alive_idle: int = setting(Int(0), 0)
    """Whole **seconds** idle before the first keep-alive probe (0 = system default)."""
    tcp_keep_alive_interval: int = setting(Int(0), 0)
    """Whole **seconds** between keep-alive probes (0 = system default)."""
    tcp_user_timeout: float = setting(Millis(), 0.0)
    """Seconds sent data may stay unacknowledged before the connection is closed (Linux
    ``TCP_USER_TIMEOUT``; 0 = system default)."""
    tcp_no_delay: bool = setting(Bool(), True)
    """Kept for Redisson compatibility: redis-py always sets ``TCP_NODELAY``."""
    database: int = setting(Int(0), 0)
    """Database index (``SELECT``). Must be 0 in cluster mode."""

    def seed_addresses(self) -> list[Address]:
        """The configured addresses, parsed (the starting points of discovery).

        Raises [`ConfigError`][redisson_py.errors.ConfigError] for a malformed address;
        call after validation.
        """
        raise NotImplementedError


@dataclass(kw_only=True, eq=True, repr=False)
class SingleServerConfig(BaseConfig):
    """One Redis server (``singleServerConfig``)."""

    IGNORED_KEYS: ClassVar[frozenset[str]] = BaseConfig.IGNORED_KEYS | {"dnsMonitoringTimes"}
    REMOVED_KEYS: ClassVar[dict[str, tuple[str, str]]] = {
        **REMOVED_BASE,
        "dnsMonitoring": ("3.7.0", "now dnsMonitoringInterval, -1 for off"),
    }
    NO_EFFECT: ClassVar[dict[str, str]] = {
        **BaseConfig.NO_EFFECT,
        "subscription_connection_minimum_idle_size": _ONE_PUBSUB,
        "subscription_connection_pool_size": _ONE_PUBSUB,
        "connection_minimum_idle_size": _NO_IDLE,
    }

    address: str | None = setting(AddressKind(required=True), None)
    """``redis://host:port`` or ``rediss://host:port``. Required."""
    subscription_connection_minimum_idle_size: int = setting(Int(0), 1)
    """No effect in redisson-py (the YAML reference says why)."""
    subscription_connection_pool_size: int = setting(Int(0), 50)
    """No effect in redisson-py (the YAML reference says why); 0 is accepted, as Redisson does."""
    connection_minimum_idle_size: int = setting(Int(0), 24)
    """No effect in redisson-py (the YAML reference says why)."""
    connection_pool_size: int = setting(Int(1, _POOL_MAX, why=_POOL_WHY), 64)
    """Most connections open at once to the server (redis-py ``max_connections``). At most
    10000: redisson-py's own limit (its threaded client's pool reserves a slot per
    connection up front); Redisson has none."""
    dns_monitoring_interval: float | None = setting(Millis(minus_one_is_none=True), 5.0)
    """Seconds between two resolutions of the address's host name; ``None`` (YAML ``-1``)
    = off. When the name resolves to another address, every connection to it is closed
    and the next ones (pub/sub too) go to the new address; an IP address is never
    re-resolved."""

    def seed_addresses(self) -> list[Address]:
        return [parse_address(self.address or "", key_path="singleServerConfig.address")]


@dataclass(kw_only=True, eq=True, repr=False)
class BaseMasterSlaveServersConfig(BaseConfig):
    """Settings of the topologies with a master and replicas (Redisson's base class)."""

    IGNORED_KEYS: ClassVar[frozenset[str]] = BaseConfig.IGNORED_KEYS | {
        "loadBalancer",  # replica choice is the manager's, per read mode
        "failedSlaveCheckInterval",  # deprecated in Redisson
        "failedSlaveNodeDetector",
        "fallbackLoadingToMaster",
        "dnsMonitoringTimes",
    }
    KEY_ALIASES: ClassVar[dict[str, str]] = {
        # Redisson < 3.12.4 also took the subscription pool keys with a "slave" prefix.
        "slaveSubscriptionConnectionMinimumIdleSize": "subscriptionConnectionMinimumIdleSize",
        "slaveSubscriptionConnectionPoolSize": "subscriptionConnectionPoolSize",
    }
    NO_EFFECT: ClassVar[dict[str, str]] = {
        **NO_EFFECT_BASE,
        "slave_connection_minimum_idle_size": _NO_IDLE,
        "slave_connection_pool_size": "every node's pool, replicas' too, takes "
        "masterConnectionPoolSize",
        "master_connection_minimum_idle_size": _NO_IDLE,
        "read_mode": "every lock read goes to the master, on purpose: a replica may lag "
        "behind a grant",
    }

    slave_connection_minimum_idle_size: int = setting(Int(0), 24)
    """No effect in redisson-py (the YAML reference says why)."""
    slave_connection_pool_size: int = setting(Int(1), 64)
    """No effect in redisson-py (the YAML reference says why): replicas' pools take
    ``master_connection_pool_size``."""
    failed_slave_reconnection_interval: float = setting(Millis(), 3.0)
    """Seconds between attempts to reconnect a replica that was taken out of rotation."""
    master_connection_minimum_idle_size: int = setting(Int(0), 24)
    """No effect in redisson-py (the YAML reference says why)."""
    master_connection_pool_size: int = setting(Int(1, _POOL_MAX, why=_POOL_WHY), 64)
    """Most connections open at once to each node, master or replica (redis-py
    ``max_connections``). At most 10000: redisson-py's own limit (its threaded client's
    pool reserves a slot per connection up front); Redisson has none."""
    read_mode: ReadMode = setting(EnumKind(ReadMode), ReadMode.SLAVE)
    """Redisson: where reads go (SLAVE, MASTER or MASTER_SLAVE). No effect in redisson-py
    (the YAML reference says why): every lock read goes to the master, on purpose."""
    subscription_mode: SubscriptionMode = setting(
        EnumKind(SubscriptionMode), SubscriptionMode.MASTER
    )
    """Which nodes carry pub/sub: MASTER or SLAVE."""
    subscription_connection_minimum_idle_size: int = setting(Int(0), 1)
    """No effect in redisson-py (the YAML reference says why)."""
    subscription_connection_pool_size: int = setting(Int(0), 50)
    """No effect in redisson-py (the YAML reference says why); 0 is accepted, as Redisson does."""
    dns_monitoring_interval: float | None = setting(Millis(minus_one_is_none=True), 5.0)
    """Seconds between two resolutions of the nodes' host names; ``None`` (YAML ``-1``) =
    off. When a name resolves to another address, every connection to it is closed and
    the next ones (pub/sub too) go to the new address; IP addresses are never
    re-resolved. Replicated mode reads ``monitorIPChanges`` instead."""


@dataclass(kw_only=True, eq=True, repr=False)
class MasterSlaveServersConfig(BaseMasterSlaveServersConfig):
    """A fixed master and replicas (``masterSlaveServersConfig``)."""

    master_address: str | None = setting(AddressKind(required=True), None)
    """The master's URL. Required."""
    slave_addresses: list[str] = setting(AddressList(non_empty=False), factory=list)
    """The replicas' URLs (may be empty: reads then go to the master)."""

    def seed_addresses(self) -> list[Address]:
        path = "masterSlaveServersConfig"
        return [parse_address(self.master_address or "", key_path=f"{path}.masterAddress")] + [
            parse_address(text, key_path=f"{path}.slaveAddresses[{i}]")
            for i, text in enumerate(self.slave_addresses)
        ]


@dataclass(kw_only=True, eq=True, repr=False)
class SentinelServersConfig(BaseMasterSlaveServersConfig):
    """Redis Sentinel (``sentinelServersConfig``): the master is discovered by name."""

    LEGACY_KEYS: ClassVar[frozenset[str]] = BaseConfig.LEGACY_KEYS | {"natMap"}
    NO_EFFECT: ClassVar[dict[str, str]] = {
        **BaseMasterSlaveServersConfig.NO_EFFECT,
        "check_slave_status_with_syncing": "every replica sentinel does not flag down counts "
        "for checkLockSyncedSlaves, whatever its link status (sentinel's view of it may be "
        "10 s old, exactly while a replica attaches)",
    }

    sentinel_addresses: list[str] = setting(AddressList(non_empty=True), factory=list)
    """The sentinels' URLs; at least one."""
    master_name: str | None = setting(Str(required=True), None)
    """The monitored master's name (``SENTINEL get-master-addr-by-name``). Required."""
    sentinel_username: str | None = setting(Str(), None)
    """ACL user for the sentinels themselves (not the data nodes)."""
    sentinel_password: Secret | None = setting(SecretKind(), None)
    """Password for the sentinels themselves (not the data nodes)."""
    scan_interval: float = setting(Millis(positive=True), 1.0)
    """Seconds between topology polls of the sentinels."""
    check_sentinels_list: bool = setting(Bool(), True)
    """Fail at startup when fewer than two sentinels answer."""
    check_slave_status_with_syncing: bool = setting(Bool(), True)
    """Redisson: treat a replica whose link to the master is down as unavailable. No effect
    in redisson-py (the YAML reference says why)."""
    sentinels_discovery: bool = setting(Bool(), True)
    """Learn further sentinels from the ones configured."""
    nat_mapper: NatMapper | None = setting(NatKind(), None)
    """Maps announced addresses to reachable ones (YAML ``natMapper``; legacy ``natMap``)."""

    def seed_addresses(self) -> list[Address]:
        return [
            parse_address(text, key_path=f"sentinelServersConfig.sentinelAddresses[{i}]")
            for i, text in enumerate(self.sentinel_addresses)
        ]


@dataclass(kw_only=True, eq=True, repr=False)
class ClusterServersConfig(BaseMasterSlaveServersConfig):
    """Redis Cluster (``clusterServersConfig``)."""

    LEGACY_KEYS: ClassVar[frozenset[str]] = BaseConfig.LEGACY_KEYS | {"natMap"}
    NO_EFFECT: ClassVar[dict[str, str]] = {
        **BaseMasterSlaveServersConfig.NO_EFFECT,
        "check_master_link_status": "replicas serve no lock reads here, and a replica's "
        "link to its master is not checked",
    }

    node_addresses: list[str] = setting(AddressList(non_empty=True), factory=list)
    """Seed nodes' URLs; at least one. The rest of the cluster is discovered."""
    scan_interval: float = setting(Millis(positive=True), 5.0)
    """Seconds between slot-map refreshes (``CLUSTER SHARDS``/``NODES``)."""
    check_slots_coverage: bool = setting(Bool(), True)
    """Fail at startup when some of the 16384 slots have no master."""
    check_master_link_status: bool = setting(Bool(), False)
    """Redisson: treat a replica whose master link is down as unavailable. No effect in
    redisson-py (the YAML reference says why)."""
    sharded_subscription_mode: ShardedSubscriptionMode = setting(
        EnumKind(ShardedSubscriptionMode), ShardedSubscriptionMode.AUTO
    )
    """Sharded pub/sub (``SSUBSCRIBE``): AUTO (when supported), ON, OFF."""
    nat_mapper: NatMapper | None = setting(NatKind(), None)
    """Maps announced addresses to reachable ones (YAML ``natMapper``; legacy ``natMap``)."""

    def seed_addresses(self) -> list[Address]:
        return [
            parse_address(text, key_path=f"clusterServersConfig.nodeAddresses[{i}]")
            for i, text in enumerate(self.node_addresses)
        ]


@dataclass(kw_only=True, eq=True, repr=False)
class ReplicatedServersConfig(BaseMasterSlaveServersConfig):
    """A replication group with no sentinel (``replicatedServersConfig``): every node is
    listed, and the master is the node whose ``ROLE`` says master, polled every
    ``scan_interval``. What managed services without cluster mode offer (AWS ElastiCache,
    Azure Cache for Redis, GCP Memorystore): see the "Managed Redis" docs page."""

    NO_EFFECT: ClassVar[dict[str, str]] = {
        **BaseMasterSlaveServersConfig.NO_EFFECT,
        "dns_monitoring_interval": "replicated mode re-resolves its nodes' host names at "
        "each scan when monitorIPChanges is true, as Redisson's does",
    }

    node_addresses: list[str] = setting(AddressList(non_empty=True), factory=list)
    """Every node of the group, master and replicas, as URLs; at least one."""
    scan_interval: float = setting(Millis(positive=True), 1.0)
    """Seconds between polls of every node's ``ROLE``: a failover is followed within one
    scan interval plus one ``timeout``."""
    monitor_ip_changes: bool = setting(Bool(), False, key="monitorIPChanges")
    """Re-resolve the nodes' host names at each scan (every ``scan_interval``): when one
    resolves to another address, every connection to it is closed and the next ones
    (pub/sub too) go to the new address. IP addresses are never re-resolved."""

    def seed_addresses(self) -> list[Address]:
        return [
            parse_address(text, key_path=f"replicatedServersConfig.nodeAddresses[{i}]")
            for i, text in enumerate(self.node_addresses)
        ]


ServerConfig = (
    SingleServerConfig
    | MasterSlaveServersConfig
    | SentinelServersConfig
    | ClusterServersConfig
    | ReplicatedServersConfig
)
"""Any one topology section."""

SECTION_KEYS: dict[type[BaseConfig], str] = {
    SingleServerConfig: "singleServerConfig",
    MasterSlaveServersConfig: "masterSlaveServersConfig",
    SentinelServersConfig: "sentinelServersConfig",
    ClusterServersConfig: "clusterServersConfig",
    ReplicatedServersConfig: "replicatedServersConfig",
}
"""Each section class and its YAML key."""

OWNER_KEYS.update(SECTION_KEYS)
