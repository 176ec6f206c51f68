"""The count-down latch's scripts (Redisson's ``RCountDownLatch``).

Data layout, Redisson's: the count is a plain integer string at the key ``name``; no
key means a count of 0 (the latch is open). Its channel is
``redisson_countdownlatch__channel__{name}`` (see
`redisson_py.core.flows.count_down_latch.channel_name` for the one cluster exception), on
which ``0`` announces that the count reached zero (waiters wake) and ``1`` that a new
count was set (waiters keep waiting).

Keys end with the request's latch, and the first argument is its lifetime (ms), as in
`redisson_py.core.scripts.synchronizers`; the second is the publish command. Setting the
count is `TRY_SET`, with
`redisson_py.core.keyspace.LATCH_NEW_COUNT_MESSAGE`.
"""

from __future__ import annotations

from redisson_py.core import keyspace
from redisson_py.core.effects import Script
from redisson_py.core.scripts import publish
from redisson_py.core.scripts.synchronizers import remembered

COUNT_DOWN = Script(
    "latch_count_down",
    # KEYS[1] latch, KEYS[2] channel, KEYS[3] this call's latch key
    # ARGV[1] latch lifetime (ms), ARGV[2] publish command
    # Decrements the count; at 0 or below the key is deleted, and reaching exactly 0
    # announces it. Reply: the count after this call (a retry: the first run's).
    remembered(
        f"""
local count = redis.call('decr', KEYS[1])
if count <= 0 then
    redis.call('del', KEYS[1])
end
if count == 0 then
    {publish("KEYS[2]", f"'{keyspace.LATCH_ZERO_MESSAGE}'", "ARGV[2]")}
end
return count
"""
    ),
)
