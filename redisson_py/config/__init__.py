"""Configuration: Redisson's settings, its YAML format, and what redis-py needs from them.

Build in code::

    config = Config()
    config.use_single_server(address="redis://127.0.0.1:6379", password="s3cret")

or load Redisson's YAML (``Config.from_yaml("config/single.yaml")``). Times are seconds
in Python and milliseconds in YAML. See [`Config`][redisson_py.config.Config] for the contract.
"""

from __future__ import annotations

from redisson_py.config.addresses import Address, parse_address, redact_address
from redisson_py.config.delays import (
    ConstantDelay,
    DecorrelatedJitterDelay,
    DelayStrategy,
    EqualJitterDelay,
    FullJitterDelay,
)
from redisson_py.config.diagnostics import ConfigNotice, ConfigUnitWarning, ConfigWarning
from redisson_py.config.durations import format_duration, parse_duration
from redisson_py.config.enums import (
    LockSyncMode,
    Protocol,
    ReadMode,
    ShardedSubscriptionMode,
    SslVerificationMode,
    SubscriptionMode,
)
from redisson_py.config.model import Config, Mode
from redisson_py.config.nat import HostNatMapper, HostPortNatMapper, NatMapper
from redisson_py.config.redis_kwargs import (
    async_connection_class,
    client_kwargs,
    connection_class,
    connection_kwargs,
    needs_ssl,
)
from redisson_py.config.secret import Secret
from redisson_py.config.sections import (
    BaseConfig,
    BaseMasterSlaveServersConfig,
    ClusterServersConfig,
    MasterSlaveServersConfig,
    ReplicatedServersConfig,
    SentinelServersConfig,
    ServerConfig,
    SingleServerConfig,
)
from redisson_py.config.tagged import TaggedValue
from redisson_py.errors import ConfigError

__all__ = [
    "Address",
    "BaseConfig",
    "BaseMasterSlaveServersConfig",
    "ClusterServersConfig",
    "Config",
    "ConfigError",
    "ConfigNotice",
    "ConfigUnitWarning",
    "ConfigWarning",
    "ConstantDelay",
    "DecorrelatedJitterDelay",
    "DelayStrategy",
    "EqualJitterDelay",
    "FullJitterDelay",
    "HostNatMapper",
    "HostPortNatMapper",
    "LockSyncMode",
    "MasterSlaveServersConfig",
    "Mode",
    "NatMapper",
    "Protocol",
    "ReadMode",
    "ReplicatedServersConfig",
    "Secret",
    "SentinelServersConfig",
    "ServerConfig",
    "ShardedSubscriptionMode",
    "SingleServerConfig",
    "SslVerificationMode",
    "SubscriptionMode",
    "TaggedValue",
    "async_connection_class",
    "client_kwargs",
    "connection_class",
    "connection_kwargs",
    "format_duration",
    "needs_ssl",
    "parse_address",
    "parse_duration",
    "redact_address",
]
