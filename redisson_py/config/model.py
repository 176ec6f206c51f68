"""The top-level [`Config`][redisson_py.config.Config]: lock settings, one topology
section, load and save."""

# setting() returns a dataclasses.Field (with the setting's kind as metadata), not a value.
# ruff: noqa: RUF009

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING, Any, ClassVar, Literal

from redisson_py.config.credentials import RotatingCredentials, rotating
from redisson_py.config.decode import decode_config
from redisson_py.config.diagnostics import ConfigNotice, Origin, suggest
from redisson_py.config.encode import encode_settings
from redisson_py.config.enums import LockSyncMode, Protocol, SslVerificationMode
from redisson_py.config.kinds import (
    Bool,
    EnumKind,
    FileKind,
    Int,
    Millis,
    SecretKind,
    SectionKind,
    Str,
    setting,
)
from redisson_py.config.redis_kwargs import connection_kwargs
from redisson_py.config.schema import Settings, by_attr, warn_unit_slip
from redisson_py.config.secret import Secret
from redisson_py.config.sections import (
    SECTION_KEYS,
    BaseConfig,
    ClusterServersConfig,
    MasterSlaveServersConfig,
    ReplicatedServersConfig,
    SentinelServersConfig,
    ServerConfig,
    SingleServerConfig,
)
from redisson_py.config.validate import validate_config
from redisson_py.config.yaml_io import dump_yaml, load_yaml, load_yaml_all
from redisson_py.errors import ConfigError

if TYPE_CHECKING:
    from redisson_py.config.addresses import Address

Mode = Literal["single", "master_slave", "sentinel", "cluster", "replicated"]

_MODES: dict[str, Mode] = {
    "single_server_config": "single",
    "master_slave_servers_config": "master_slave",
    "sentinel_servers_config": "sentinel",
    "cluster_servers_config": "cluster",
    "replicated_servers_config": "replicated",
}

# Top-level settings that apply to the section when the section leaves them unset.
_INHERITED = (
    "username",
    "password",
    "ssl_truststore",
    "ssl_keystore",
    "ssl_keystore_password",
    "ssl_private_key",
)
_INHERITED_TCP = (
    "tcp_keep_alive_count",
    "tcp_keep_alive_idle",
    "tcp_keep_alive_interval",
    "tcp_user_timeout",
)

_TOP_IGNORED = frozenset(
    {
        # Java runtime, codecs and Redisson features that have no counterpart here.
        "threads", "nettyThreads", "nettyExecutor", "executor", "eventLoopGroup", "nettyHook",
        "transportMode", "codec", "referenceEnabled", "keepPubSubOrder", "useScriptCache",
        "minCleanUpDelay", "maxCleanUpDelay", "cleanUpKeysAmount", "connectionListener",
        "useThreadClassLoader", "addressResolverGroupFactory", "lazyInitialization",
        "valkeyCapabilities", "commandMapper", "credentialsResolver",
        "reliableTopicWatchdogTimeout", "registrationKey",
        "sslProvider", "sslKeystoreType", "sslTruststorePassword", "sslProtocols", "sslCiphers",
        "sslTrustManagerFactory", "sslKeyManagerFactory",
    }
)  # fmt: skip


@dataclasses.dataclass(kw_only=True, eq=True, repr=False)
class Config(Settings):
    """A redisson-py configuration: lock settings plus exactly one topology section.

    Build it in code (``Config().use_single_server(address="redis://127.0.0.1:6379")``) or
    load Redisson's YAML ([`from_yaml`][redisson_py.config.Config.from_yaml]). Times are
    seconds in Python and milliseconds in YAML. ``username``, ``password`` and the
    ``ssl_*``/``tcp_*`` settings here are Redisson's newer top-level spellings: they
    apply to the section wherever the section leaves the setting unset (see
    [`effective_server_config`][redisson_py.config.Config.effective_server_config]).
    """

    IGNORED_KEYS: ClassVar[frozenset[str]] = _TOP_IGNORED
    REMOVED_KEYS: ClassVar[dict[str, tuple[str, str]]] = {
        "useLinuxNativeEpoll": ("3.10.0", "now transportMode: EPOLL"),
        "codecProvider": ("3.5.7", "a Java class"),
        "resolverProvider": ("3.5.7", "a Java class"),
        "redissonReferenceEnabled": ("3.5.7", "now referenceEnabled"),
        "referenceCodecProvider": ("3.10.1", "a Java class"),
        "decodeInExecutor": ("3.14.0", "a Java thread setting"),
    }
    REJECTED_KEYS: ClassVar[dict[str, str]] = {
        "proxyServersConfig": "proxy mode",
        "multiClusterServersConfig": "multi-cluster mode",
        "multiSentinelServersConfig": "multi-sentinel mode",
    }

    single_server_config: SingleServerConfig | None = setting(SectionKind(SingleServerConfig), None)
    master_slave_servers_config: MasterSlaveServersConfig | None = setting(
        SectionKind(MasterSlaveServersConfig), None
    )
    sentinel_servers_config: SentinelServersConfig | None = setting(
        SectionKind(SentinelServersConfig), None
    )
    cluster_servers_config: ClusterServersConfig | None = setting(
        SectionKind(ClusterServersConfig), None
    )
    replicated_servers_config: ReplicatedServersConfig | None = setting(
        SectionKind(ReplicatedServersConfig), None
    )

    lock_watchdog_timeout: float = setting(Millis(positive=True, minimum=0.1), 30.0)
    """Seconds a lock taken without a lease lives between watchdog renewals (renewed every
    third of it). 0.1 s (YAML 100 ms) to 1 day."""
    lock_max_hold_time: float = setting(Millis(), 0.0, write_default=False)
    """Seconds after which the watchdog stops renewing a lock taken without a lease (its
    last renewal makes the key expire then, and the hold is reported lost, "held past
    max_hold_time"); 0: no cap. The default of every ``lock()``, ``try_lock()`` and
    ``synchronized`` without ``max_hold_time``. redisson-py's own key (Redisson has no
    such cap)."""
    lock_watchdog_batch_size: int = setting(Int(1, 10_000), 100)
    """Locks renewed per watchdog round trip."""
    fair_lock_wait_timeout: float = setting(Millis(positive=True), 300.0)
    """Seconds a fair lock's waiter that stopped retrying (a dead client) keeps its place
    in the queue, blocking the waiters behind it; a ``try_lock`` with a wait time uses
    its wait time instead. 5 minutes, as Redisson."""
    check_lock_synced_slaves: bool = setting(Bool(), True)
    """After an acquire, check (``WAIT``) that the master's replicas received it."""
    slaves_sync_timeout: float = setting(Millis(positive=True), 1.0)
    """Seconds that replica check may take."""
    lock_sync_mode: LockSyncMode = setting(
        EnumKind(LockSyncMode), LockSyncMode.WAIT, write_default=False
    )
    """How that check confirms a grant: ``WAIT`` (replicas received it) or ``WAITAOF``
    (master and replicas fsynced it to their AOF; Redis >= 7.2 or Valkey with
    ``appendonly yes``, checked at startup). A redisson-py extension, not in Redisson."""
    protocol: Protocol = setting(EnumKind(Protocol), Protocol.RESP2)
    """RESP2 or RESP3."""

    # Redisson 4's top-level connection settings (3.x has them on the sections only):
    # written by to_yaml() only when set, so its YAML stays readable by Redisson 3.x.
    username: str | None = setting(Str(), None, write_default=False)
    password: Secret | None = setting(SecretKind(), None, write_default=False)
    ssl_verification_mode: SslVerificationMode = setting(
        EnumKind(SslVerificationMode), SslVerificationMode.STRICT, write_default=False
    )
    """Applies where the section keeps the default STRICT."""
    ssl_truststore: str | None = setting(FileKind(), None, write_default=False)
    ssl_keystore: str | None = setting(FileKind(), None, write_default=False)
    ssl_keystore_password: Secret | None = setting(SecretKind(), None, write_default=False)
    ssl_private_key: str | None = setting(FileKind(), None, write_default=False)
    """redisson-py extension (YAML ``sslPrivateKey``), as on the section."""
    tcp_keep_alive: bool = setting(Bool(), True, write_default=False)
    """TCP keep-alive (Redisson's top-level default is on); the section's ``keep_alive``
    also turns it on."""
    tcp_keep_alive_count: int = setting(Int(0), 0, write_default=False)
    tcp_keep_alive_idle: int = setting(Int(0), 0, write_default=False)
    """Whole seconds."""
    tcp_keep_alive_interval: int = setting(Int(0), 0, write_default=False)
    """Whole seconds."""
    tcp_user_timeout: float = setting(Millis(), 0.0, write_default=False)
    tcp_no_delay: bool = setting(Bool(), True, write_default=False)

    _origin: Origin | None = dataclasses.field(default=None, init=False, repr=False, compare=False)
    _credential_provider: RotatingCredentials | None = dataclasses.field(
        default=None, init=False, repr=False, compare=False
    )

    # -- topology -------------------------------------------------------------------------

    def _sections(self) -> list[tuple[str, BaseConfig]]:
        return [(attr, section) for attr in _MODES if (section := getattr(self, attr)) is not None]

    @property
    def mode(self) -> Mode:
        """``"single"``, ``"master_slave"``, ``"sentinel"``, ``"cluster"`` or ``"replicated"``.

        Raises [`ConfigError`][redisson_py.errors.ConfigError] when no section or more
        than one is set.
        """
        sections = self._sections()
        if len(sections) != 1:
            self._raise_topology(sections)
        return _MODES[sections[0][0]]

    @property
    def server_config(self) -> ServerConfig:
        """The one topology section, as stored (see also
        [`effective_server_config`][redisson_py.config.Config.effective_server_config]).

        Raises [`ConfigError`][redisson_py.errors.ConfigError] when no section or more
        than one is set.
        """
        sections = self._sections()
        if len(sections) != 1:
            self._raise_topology(sections)
        section = sections[0][1]
        if not isinstance(
            section,
            SingleServerConfig
            | MasterSlaveServersConfig
            | SentinelServersConfig
            | ClusterServersConfig
            | ReplicatedServersConfig,
        ):
            raise ConfigError(
                f"{sections[0][0]}: expected a server section object, got {type(section).__name__}"
            )
        return section

    def _raise_topology(self, sections: list[tuple[str, BaseConfig]]) -> None:
        origin = self._origin or Origin()
        keys = [SECTION_KEYS[type(section)] for _, section in sections]
        if not sections:
            raise origin.error(
                (),
                "no server section: set exactly one of singleServerConfig, "
                "masterSlaveServersConfig, sentinelServersConfig, clusterServersConfig, "
                "replicatedServersConfig",
            )
        raise origin.error(
            (keys[1],),
            f"only one server section may be set, found {' and '.join(keys)}",
        )

    def effective_server_config(self) -> ServerConfig:
        """A copy of the section with the top-level settings applied where it leaves them unset.

        ``username``, ``password``, ``ssl_truststore``, ``ssl_keystore``,
        ``ssl_keystore_password``, ``ssl_private_key`` fill the section's ``None``;
        ``ssl_verification_mode`` replaces the section's default STRICT; ``tcp_keep_alive``
        turns ``keep_alive`` on; ``tcp_*`` numbers fill the section's zeros; a ``False``
        ``tcp_no_delay`` on either wins. This is what connections must be built from.
        """
        section = self.server_config
        changes: dict[str, Any] = {}
        for attr in _INHERITED:
            if getattr(section, attr) is None and getattr(self, attr) is not None:
                changes[attr] = getattr(self, attr)
        for attr in _INHERITED_TCP:
            if not getattr(section, attr) and getattr(self, attr):
                changes[attr] = getattr(self, attr)
        if (
            section.ssl_verification_mode is SslVerificationMode.STRICT
            and self.ssl_verification_mode is not SslVerificationMode.STRICT
        ):
            changes["ssl_verification_mode"] = self.ssl_verification_mode
        if self.tcp_keep_alive and not section.keep_alive:
            changes["keep_alive"] = True
        if not self.tcp_no_delay:
            changes["tcp_no_delay"] = False
        return dataclasses.replace(section, **changes)

    # -- building in code -----------------------------------------------------------------

    def _use(self, attr: str, cls: type[BaseConfig], fields: dict[str, Any]) -> Any:
        key = SECTION_KEYS[cls]
        for other_attr, other in self._sections():
            if other_attr != attr:
                raise ConfigError(
                    f"{key}: {SECTION_KEYS[type(other)]} is already in use; "
                    "a config has exactly one server section",
                    path=key,
                )
        known = by_attr(cls)
        for name in fields:
            if name not in known:
                hint = suggest(name, known)
                tip = f"; did you mean {hint!r}?" if hint else ""
                raise ConfigError(f"{key}.{name}: unknown setting{tip}", path=f"{key}.{name}")
        section = getattr(self, attr)
        if section is None:
            section = cls(**fields)
            setattr(self, attr, section)
            for name, value in fields.items():  # assignments below warn by themselves
                warn_unit_slip(cls, known[name], value, stacklevel=3)
        else:  # like Redisson, a second call returns the section already there
            for name, value in fields.items():
                setattr(section, name, value)
        return section

    def use_single_server(self, address: str | None = None, **fields: Any) -> SingleServerConfig:
        """Select single-server mode and return its section (created once, then reused).

        ``fields`` are [`SingleServerConfig`][redisson_py.config.SingleServerConfig]
        attributes. Raises [`ConfigError`][redisson_py.errors.ConfigError] when another
        topology is already selected or a field name is unknown.
        """
        if address is not None:
            fields["address"] = address
        section: SingleServerConfig = self._use("single_server_config", SingleServerConfig, fields)
        return section

    def use_master_slave_servers(
        self,
        master_address: str | None = None,
        slave_addresses: list[str] | None = None,
        **fields: Any,
    ) -> MasterSlaveServersConfig:
        """Select master/slave mode and return its section; as
        [`use_single_server`][redisson_py.config.Config.use_single_server]."""
        if master_address is not None:
            fields["master_address"] = master_address
        if slave_addresses is not None:
            fields["slave_addresses"] = list(slave_addresses)
        section: MasterSlaveServersConfig = self._use(
            "master_slave_servers_config", MasterSlaveServersConfig, fields
        )
        return section

    def use_sentinel_servers(
        self,
        master_name: str | None = None,
        sentinel_addresses: list[str] | None = None,
        **fields: Any,
    ) -> SentinelServersConfig:
        """Select sentinel mode and return its section. Same rules as
        [`use_single_server`][redisson_py.config.Config.use_single_server]."""
        if master_name is not None:
            fields["master_name"] = master_name
        if sentinel_addresses is not None:
            fields["sentinel_addresses"] = list(sentinel_addresses)
        section: SentinelServersConfig = self._use(
            "sentinel_servers_config", SentinelServersConfig, fields
        )
        return section

    def use_cluster_servers(
        self, node_addresses: list[str] | None = None, **fields: Any
    ) -> ClusterServersConfig:
        """Select cluster mode and return its section. Same rules as
        [`use_single_server`][redisson_py.config.Config.use_single_server]."""
        if node_addresses is not None:
            fields["node_addresses"] = list(node_addresses)
        section: ClusterServersConfig = self._use(
            "cluster_servers_config", ClusterServersConfig, fields
        )
        return section

    def use_replicated_servers(
        self, node_addresses: list[str] | None = None, **fields: Any
    ) -> ReplicatedServersConfig:
        """Select replicated mode (every node listed, the master found by its ``ROLE``;
        managed Redis without cluster mode) and return its section. Same rules as
        [`use_single_server`][redisson_py.config.Config.use_single_server]."""
        if node_addresses is not None:
            fields["node_addresses"] = list(node_addresses)
        section: ReplicatedServersConfig = self._use(
            "replicated_servers_config", ReplicatedServersConfig, fields
        )
        return section

    # -- checking -------------------------------------------------------------------------

    def validate(self) -> None:
        """Check every setting; raise [`ConfigError`][redisson_py.errors.ConfigError] at
        the first problem.

        Checks: exactly one section; types; no negative times (and no zero where zero
        makes no sense); addresses (scheme, host, port); required settings (``address``,
        ``masterAddress``, ``masterName``); non-empty sentinel and node lists; idle minimums
        within pool sizes; database 0 in cluster mode; ``sslPrivateKey`` only with
        ``sslKeystore``. For a config loaded from YAML the message names the line. Does not
        touch the network or the file system. Does not modify the config.
        """
        validate_config(self)

    # -- YAML and dicts -------------------------------------------------------------------

    @classmethod
    def from_yaml(
        cls,
        source: str | bytes | bytearray | os.PathLike[str] | IO[str] | IO[bytes],
        *,
        env: Mapping[str, str] | None = None,
        notices: list[ConfigNotice] | None = None,
    ) -> Config:
        """Load and validate a config in Redisson's YAML format.

        ``source`` is a path (``pathlib.Path``, or a ``str`` with no newline naming an
        existing file or ending in ``.yaml``/``.yml``), YAML text, UTF-8 YAML ``bytes``, or
        an open stream. Documents over 1 MiB or nested over 64 levels are refused.
        ``${VAR}`` and ``${VAR:-default}`` in scalar values are replaced from ``env``
        (default ``os.environ``; an empty variable takes the default, as in the shell);
        ``$${`` stands for a literal ``${`` (a redisson-py extension).
        Loading is safe: tags never construct objects. Redisson settings that mean nothing
        here (Java-only keys, keys Redisson removed, settings without effect in
        redisson-py set away from their default) are listed in one `ConfigWarning`, each
        with its line and why; likely unit slips in one `ConfigUnitWarning`. Given a
        ``notices`` list, the same are appended to it as
        [`ConfigNotice`][redisson_py.config.ConfigNotice]s and no warning is emitted
        (whatever the warnings filter).

        Raises [`ConfigError`][redisson_py.errors.ConfigError] (with source and line)
        for any malformed input, and
        [`ConfigFileError`][redisson_py.errors.ConfigFileError] (a ConfigError that is
        also an ``OSError``) when the file cannot be read.
        """
        data, origin = load_yaml(source, env=os.environ if env is None else env)
        return decode_config(cls, data, origin, stacklevel=2, notices=notices)

    @classmethod
    def from_yaml_all(
        cls,
        source: str | bytes | bytearray | os.PathLike[str] | IO[str] | IO[bytes],
        *,
        env: Mapping[str, str] | None = None,
    ) -> list[Config]:
        """Load every ``---``-separated document of ``source`` as its own config, e.g. the
        independent masters of a RedLock. Same rules and errors as
        [`from_yaml`][redisson_py.config.Config.from_yaml]; ignored settings are listed
        in one warning per document."""
        documents = load_yaml_all(source, env=os.environ if env is None else env)
        return [decode_config(cls, data, origin, stacklevel=2) for data, origin in documents]

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str | None = None) -> Config:
        """Build and validate a config from a mapping in the YAML's shape (camelCase keys,
        milliseconds, `TaggedValue` for tagged values). No environment substitution.

        Raises [`ConfigError`][redisson_py.errors.ConfigError]; ``source`` (if given)
        prefixes its messages.
        """
        return decode_config(cls, data, Origin(source=source), stacklevel=2)

    def to_dict(self, *, include_defaults: bool = True) -> dict[str, Any]:
        """The config in Redisson's YAML shape: camelCase keys, milliseconds, ISO durations,
        `TaggedValue` for delays and NAT mappers. Passwords are revealed: this is
        serialization. ``None`` settings are left out, as Redisson does."""
        return encode_settings(self, include_defaults=include_defaults)

    def to_yaml(self, *, include_defaults: bool = True) -> str:
        """[`to_dict`][redisson_py.config.Config.to_dict] written as Redisson writes
        YAML; ``from_yaml(c.to_yaml()) == c``.

        Contains the passwords in clear text, like the YAML it came from.
        """
        return dump_yaml(self.to_dict(include_defaults=include_defaults))

    # -- connections ------------------------------------------------------------------------

    def set_credential_provider(self, provider: object | None) -> Config:
        """Take the data nodes' credentials from ``provider`` (redis-py's
        ``CredentialProvider`` protocol: ``get_credentials()`` returning ``(password,)``
        or ``(username, password)``; an ``async get_credentials_async()`` too, if it has
        one, for the asyncio client), asked on every new connection, so credentials
        that rotate (Entra ID, IAM tokens) keep working: see
        `redisson_py.config.credentials`. It replaces ``username``/``password`` (and a
        URL's user info) for data nodes; sentinels keep their own. ``None`` removes it.
        Code only: the YAML ``credentialsResolver`` (a Java class) is ignored with a
        warning pointing here. Returns the config.

        Raises [`ConfigError`][redisson_py.errors.ConfigError] when ``provider`` has no
        ``get_credentials()``.
        """
        self._credential_provider = None if provider is None else rotating(provider)
        return self

    @property
    def credential_provider(self) -> RotatingCredentials | None:
        """The provider given to
        [`set_credential_provider`][redisson_py.config.Config.set_credential_provider],
        wrapped for redis-py (its repr names the provider's type only)."""
        return self._credential_provider

    def connection_kwargs(self, address: Address, *, sentinel: bool = False) -> dict[str, Any]:
        """Keyword arguments for redis-py's ``Connection``/``SSLConnection`` (sync or asyncio)
        to ``address``, from
        [`effective_server_config`][redisson_py.config.Config.effective_server_config]
        and [`protocol`][redisson_py.config.Config.protocol].

        ``sentinel=True`` builds them for a sentinel node: sentinel credentials, database 0.
        """
        return connection_kwargs(
            self.effective_server_config(), address, protocol=self.protocol, sentinel=sentinel
        )
