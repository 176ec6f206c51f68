"""The test harness's error, exported as
[`redisson_py.testing.TopologyError`][redisson_py.testing.TopologyError].

It was defined in [`redisson_py.errors`][redisson_py.errors] before;
``from redisson_py.errors import TopologyError`` and ``redisson_py.TopologyError`` still
give this class, with a `DeprecationWarning`.
"""

from __future__ import annotations

from redisson_py.errors import RedissonError


class TopologyError(RedissonError):
    """A topology spec (``topologies/*.yaml``) is malformed or cannot be started."""


__all__ = ["TopologyError"]
