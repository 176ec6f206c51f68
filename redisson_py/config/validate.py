"""Semantic checks of a whole config (see
[`Config.validate`][redisson_py.config.Config.validate] for the list)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from redisson_py.config.diagnostics import Invalid, KeyPath, Origin
from redisson_py.config.schema import Settings, by_attr, specs
from redisson_py.config.sections import (
    SECTION_KEYS,
    BaseConfig,
    BaseMasterSlaveServersConfig,
    ClusterServersConfig,
    SingleServerConfig,
)

if TYPE_CHECKING:
    from redisson_py.config.model import Config

# (minimum idle size, pool size) pairs that Redisson checks, per section class (Redisson
# does not check a single server's subscription pool, whose size 0 turns pub/sub off).
_POOLS: dict[type[BaseConfig], tuple[tuple[str, str], ...]] = {
    SingleServerConfig: (("connection_minimum_idle_size", "connection_pool_size"),),
    BaseMasterSlaveServersConfig: (
        ("master_connection_minimum_idle_size", "master_connection_pool_size"),
        ("slave_connection_minimum_idle_size", "slave_connection_pool_size"),
        ("subscription_connection_minimum_idle_size", "subscription_connection_pool_size"),
    ),
}


def validate_config(config: Config) -> None:
    """Raise [`ConfigError`][redisson_py.errors.ConfigError] at the first problem; see
    [`Config.validate`][redisson_py.config.Config.validate]."""
    origin = config._origin or Origin()
    _check_fields(config, (), origin)
    section = config.server_config  # raises when there is not exactly one section
    root = (SECTION_KEYS[type(section)],)
    _check_fields(section, root, origin)
    for cls, pairs in _POOLS.items():
        if isinstance(section, cls):
            for minimum, size in pairs:
                _check_pool(section, minimum, size, root, origin)
    if isinstance(section, ClusterServersConfig) and section.database != 0:
        raise origin.error(
            (*root, "database"),
            "must be 0: Redis Cluster has only database 0",
        )
    for owner, path in ((section, root), (config, ())):
        if (
            owner.ssl_private_key is not None
            and (section.ssl_keystore or config.ssl_keystore) is None
        ):
            raise origin.error(
                (*path, "sslPrivateKey"),
                "needs sslKeystore (the client certificate the key belongs to)",
            )


def _check_fields(obj: Settings, path: KeyPath, origin: Origin) -> None:
    for spec in specs(type(obj)):
        try:
            spec.kind.check(getattr(obj, spec.attr))
        except Invalid as exc:
            base = (*path, spec.key)
            raise origin.invalid(base, exc.subpath, exc.message, spec.kind.hint()) from None


def _check_pool(
    section: BaseConfig, minimum: str, size: str, path: KeyPath, origin: Origin
) -> None:
    low, high = getattr(section, minimum), getattr(section, size)
    if low > high:
        low_key, high_key = by_attr(type(section))[minimum].key, by_attr(type(section))[size].key
        if origin.env_names((*path, low_key)) or origin.env_names((*path, high_key)):
            # A value from ${VAR} is named, never shown.
            names = origin.env_names((*path, low_key)) + origin.env_names((*path, high_key))
            variables = ", ".join(f"${{{name}}}" for name in names)
            raise origin.error(
                (*path, low_key), f"must not exceed {high_key} (values from {variables})"
            )
        # Point at the setting the file actually has (Redisson's defaults are 24 and 64).
        if (*path, low_key) not in origin.lines and (*path, high_key) in origin.lines:
            raise origin.error((*path, high_key), f"must be at least {low_key} ({high} < {low})")
        raise origin.error((*path, low_key), f"must not exceed {high_key} ({low} > {high})")
