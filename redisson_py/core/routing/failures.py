"""The library's own errors for what goes wrong on the way to a node.

Inside, the managers and flows meet redis-py's errors (and the socket's); nothing of
that kind may leave the public API. `note_node` lets a shell record on an error
which node it came from, where it still knows; `as_redisson_error` turns any error
into a [`RedissonError`][redisson_py.errors.RedissonError] that names the lock and that
node, keeping the original as ``__cause__`` (the caller raises it ``from`` the
original).
"""

from __future__ import annotations

import contextlib
import re

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from redisson_py.config import Config
from redisson_py.core.routing import refusals
from redisson_py.errors import (
    CommandTimeoutError,
    ConnectError,
    RedissonError,
    ServerRefusedError,
)

_NODE_ATTRIBUTE = "redisson_py_node"


def note_node(error: BaseException, address: object) -> None:
    """Record on ``error`` that it came from the node at ``address`` (first one wins)."""
    if getattr(error, _NODE_ATTRIBUTE, None) is None:
        with contextlib.suppress(AttributeError):  # an exception without a __dict__
            setattr(error, _NODE_ATTRIBUTE, str(address))


def node_of(error: BaseException) -> str | None:
    """The node `note_node` recorded on ``error``, if any."""
    node = getattr(error, _NODE_ATTRIBUTE, None)
    return node if isinstance(node, str) else None


def is_timeout(error: BaseException) -> bool:
    """True for a reply that did not come in time (redis-py's, asyncio's, a socket's)."""
    return isinstance(error, RedisTimeoutError | TimeoutError)


def as_redisson_error(
    error: BaseException, subject: str, *, lock_name: str | None, node: str | None
) -> RedissonError:
    """``error`` itself when it is ours, else ours in its place.

    ``subject`` opens the message (``"lock 'x'"``, ``"RedLock('a', 'b')"``); ``node`` is
    the node to name when the error did not record one. A node's refusal
    (`redisson_py.core.routing.refusals`) becomes
    [`ServerRefusedError`][redisson_py.errors.ServerRefusedError], timeouts
    [`CommandTimeoutError`][redisson_py.errors.CommandTimeoutError], connection and
    socket errors [`ConnectError`][redisson_py.errors.ConnectError], anything else
    (another error reply, say) a plain
    [`RedissonError`][redisson_py.errors.RedissonError].
    """
    if isinstance(error, RedissonError):
        return error
    where = node_of(error) or node or "the node"
    refusal = refusals.refusal_of(error)
    if refusal is not None:
        code, text = refusal
        meaning = refusals.REFUSALS[code]
        return ServerRefusedError(
            f"{subject}: {where} refused the command: {code} {text} ({meaning.why};"
            " nothing was applied)",
            lock_name=lock_name,
            address=where,
            refusal=code,
            text=text,
            transient=meaning.transient,
        )
    if is_timeout(error):
        return CommandTimeoutError(
            f"{subject}: {where} did not answer in time ({error})",
            lock_name=lock_name,
            address=where,
        )
    if isinstance(error, RedisConnectionError | OSError):
        return ConnectError(
            f"{subject}: cannot reach {where}: {error}", lock_name=lock_name, address=where
        )
    if isinstance(error, ResponseError):
        code, text = refusals.error_code(error)
        kind = _kind_of(subject)
        hint = ""
        if code == "WRONGTYPE" and kind != "fenced resource":  # a resource's key is the user's
            hint = f" (is the key used by something other than a {kind}?)"
        return RedissonError(f"{subject}: {where} answered with an error: {code} {text}{hint}")
    return RedissonError(f"{subject}: {where}: {type(error).__name__}: {error}")


_KIND = re.compile(r"([a-z][a-z -]*?) '")


def _kind_of(subject: str) -> str:
    """What ``subject`` is (``"lock 'x'"``: ``lock``, ``"count-down latch 'x'"``: ``count-down
    latch``); a MultiLock's or RedLock's members are locks."""
    found = _KIND.match(subject)
    return found.group(1) if found else "lock"


# The setting that holds the addresses a client starts from, per topology section.
_ADDRESS_SETTINGS = (
    ("single_server_config", ("singleServerConfig", "address")),
    ("master_slave_servers_config", ("masterSlaveServersConfig", "masterAddress")),
    ("sentinel_servers_config", ("sentinelServersConfig", "sentinelAddresses")),
    ("cluster_servers_config", ("clusterServersConfig", "nodeAddresses")),
    ("replicated_servers_config", ("replicatedServersConfig", "nodeAddresses")),
)


def with_next_step(error: ConnectError, config: Config) -> ConnectError:
    """``error`` (raised while a client starts) with where its addresses were set and what
    to run next appended to its message: for a config loaded from a YAML file, the file,
    the line of the address key and ``redisson-py config check FILE --connect``; for one
    built in code, what to check. Returns ``error`` itself, so its traceback stays."""
    path = next((p for attr, p in _ADDRESS_SETTINGS if getattr(config, attr) is not None), None)
    origin = config._origin  # Config's record of where each key came from
    source = origin.source if origin is not None else None
    key = ".".join(path) if path else "the server address"
    if origin is not None and source and not source.startswith("<"):
        line = origin.lines.get(path) if path else None
        where = f"{source}, line {line}" if line is not None else source
        hint = (
            f"The address is {key} in {where}; check it (and that the server is running) "
            f"with: redisson-py config check {source} --connect"
        )
    else:
        hint = (
            f"Check {key} (host and port) and that the server is running there; with the "
            "config in a YAML file, redisson-py config check FILE --connect says what it "
            "reaches."
        )
    message = str(error.args[0]) if error.args else str(error)
    error.next_step = hint
    error.args = (f"{message.rstrip('.')}. {hint}", *error.args[1:])
    return error
