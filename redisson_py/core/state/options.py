"""From a [`Config`][redisson_py.config.Config] to what the managers and locks use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from redisson_py.config.addresses import Address
from redisson_py.config.model import Config
from redisson_py.config.redis_kwargs import connection_kwargs
from redisson_py.config.sections import BaseConfig
from redisson_py.core.state.client_state import LockSettings


def connection_kwargs_for(
    config: Config, section: BaseConfig
) -> Callable[[Address, bool], dict[str, Any]]:
    """(address, sentinel?) -> redis-py connection keyword arguments for ``section``;
    for a data node, the config's credential provider in place of a password, if it has
    one."""

    provider = config.credential_provider

    def kwargs_for(address: Address, sentinel: bool) -> dict[str, Any]:
        kwargs = connection_kwargs(section, address, protocol=config.protocol, sentinel=sentinel)
        if provider is not None and not sentinel:
            # Asked on every new connection (redis-py refuses it beside a password).
            kwargs.pop("username", None)
            kwargs.pop("password", None)
            kwargs["credential_provider"] = provider
        return kwargs

    return kwargs_for


def lock_settings(config: Config, section: BaseConfig) -> LockSettings:
    """The lock behaviour ``config`` asks for (times in seconds)."""
    return LockSettings(
        watchdog_timeout=config.lock_watchdog_timeout,
        check_lock_synced_slaves=config.check_lock_synced_slaves,
        slaves_sync_timeout=config.slaves_sync_timeout,
        retry_attempts=section.retry_attempts,
        retry_delay=section.retry_delay.delay,
        subscription_timeout=section.subscription_timeout,
        command_timeout=section.timeout,
        renew_batch_size=config.lock_watchdog_batch_size,
        fair_lock_wait_timeout=config.fair_lock_wait_timeout,
        max_hold_time=config.lock_max_hold_time or None,
    )
