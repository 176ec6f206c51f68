"""The permit-expirable semaphore's scripts (Redisson's ``RPermitExpirableSemaphore``).

Data layout, Redisson's: the number of available permits at the key ``name`` (a plain
integer string, as `semaphore`'s); the acquired permits
in the sorted set ``{name}:timeout``, one member per permit: its id, 16 random bytes
stored as they are (the user sees them as 32 hex digits), scored by its expiry in
wall-clock milliseconds, or `redisson_py.core.keyspace.PERMIT_NO_LEASE` for a permit
without a lease. Changes that make permits available publish on ``redisson_sc:{name}``:
the new count (a release, a reclaim), or the permits added (``add_permits``).

Every script first reclaims the permits whose lease ran out (`reclaim`): they
leave the set and return to the count, so a dead holder's permits come back at the next
call of any client. Times are the calling client's wall clock, as in Redisson: keep the
clients' clocks in step (NTP) to well within a lease.

Keys: ``KEYS[1]`` the count, ``KEYS[2]`` the set, ``KEYS[3]`` the channel, then this
request's latch (scripts that change state); arguments: ``ARGV[1]`` the latch lifetime
(ms), ``ARGV[2]`` the publish command, ``ARGV[3]`` now (wall-clock ms).
"""

from __future__ import annotations

from redisson_py.core import keyspace
from redisson_py.core.effects import Script
from redisson_py.core.scripts import publish
from redisson_py.core.scripts.synchronizers import GRANT_CHECK, GRANTED, UNDO_CHECK, remembered


def reclaim() -> str:
    """Lua: the permits whose lease ended by ``ARGV[3]`` leave the set and return to the
    count; the new count is announced when positive."""
    return f"""
local expired = redis.call('zremrangebyscore', KEYS[2], 0, ARGV[3])
if expired > 0 then
    local available = redis.call('incrby', KEYS[1], expired)
    if available > 0 then
        {publish("KEYS[3]", "available", "ARGV[2]")}
    end
end
"""


ACQUIRE = Script(
    "permit_semaphore_acquire",
    # KEYS[1] count, KEYS[2] set, KEYS[3] channel, KEYS[4] this acquire's latch
    # ARGV[1] latch lifetime (ms), ARGV[2] publish command, ARGV[3] now (ms),
    # ARGV[4] the first permit id (16 bytes), ARGV[5] the permits' expiry (wall-clock
    # ms, or PERMIT_NO_LEASE), ARGV[6..] the further permit ids
    # Takes one permit per id, all or none (Redisson's acquire(int permits): each id a
    # member of the set, all scored by the one expiry, the count decremented by their
    # number); the set expires with the count when the count has a TTL.
    # Reply: {1, 0} taken (now, or by an earlier attempt of this acquire), {0, ms}
    # fewer available than asked and the first lease ends in ms (-1: no lease will),
    # {2, 0} this acquire was undone.
    GRANT_CHECK
    + reclaim()
    + f"""
local wanted = #ARGV - 4
local available = tonumber(redis.call('get', KEYS[1]))
if available == nil or available < wanted then
    local first = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
    if first[2] ~= nil and tonumber(first[2]) < {keyspace.PERMIT_NO_LEASE} then
        return {{0, tonumber(first[2]) - tonumber(ARGV[3])}}
    end
    return {{0, -1}}
end
redis.call('decrby', KEYS[1], wanted)
redis.call('zadd', KEYS[2], ARGV[5], ARGV[4])
for i = 6, #ARGV do
    redis.call('zadd', KEYS[2], ARGV[5], ARGV[i])
end
local ttl = redis.call('pttl', KEYS[1])
if ttl > 0 then
    redis.call('pexpire', KEYS[2], ttl)
end
"""
    + GRANTED,
)

UNDO_ACQUIRE = Script(
    "permit_semaphore_undo_acquire",
    # KEYS[1] count, KEYS[2] set, KEYS[3] channel, KEYS[4] the acquire's latch
    # ARGV[1] latch lifetime (ms), ARGV[2] publish command, ARGV[3] now (ms),
    # ARGV[4..] the permit ids
    # Gives back the permits the acquire took, if it did and they are still acquired;
    # an attempt of it the server runs afterwards takes nothing. Idempotent.
    # Reply: 1 when the acquire had been applied, else 0.
    UNDO_CHECK
    + f"""
local returned = 0
for i = 4, #ARGV do
    returned = returned + redis.call('zrem', KEYS[2], ARGV[i])
end
if returned > 0 then
    local available = redis.call('incrby', KEYS[1], returned)
    {publish("KEYS[3]", "available", "ARGV[2]")}
end
return 1
""",
)

TRY_RELEASE = Script(
    "permit_semaphore_try_release",
    # KEYS[1] count, KEYS[2] set, KEYS[3] channel, KEYS[4] this call's latch
    # ARGV[1] latch lifetime (ms), ARGV[2] publish command, ARGV[3] now (ms),
    # ARGV[4..] the permit ids, no id twice
    # All or nothing (Redisson's tryRelease of a list, since 3.41): when every permit is
    # acquired and its lease had not ended, releases them all and announces the new
    # count; when any is not, releases none.
    # Reply: how many were released: all of them, or 0.
    remembered(
        reclaim()
        + f"""
for i = 4, #ARGV do
    if redis.call('zscore', KEYS[2], ARGV[i]) == false then
        return 0
    end
end
local released = 0
for i = 4, #ARGV do
    released = released + redis.call('zrem', KEYS[2], ARGV[i])
end
local available = redis.call('incrby', KEYS[1], released)
{publish("KEYS[3]", "available", "ARGV[2]")}
return released
"""
    ),
)

UPDATE_LEASE = Script(
    "permit_semaphore_update_lease",
    # KEYS[1] count, KEYS[2] set, KEYS[3] channel, KEYS[4] this call's latch
    # ARGV[1] latch lifetime (ms), ARGV[2] publish command, ARGV[3] now (ms),
    # ARGV[4] the permit id, ARGV[5] its new expiry (wall-clock ms, or PERMIT_NO_LEASE)
    # Reply: 1 when the permit is acquired (its expiry now ARGV[5]), else 0.
    remembered(
        reclaim()
        + """
if redis.call('zscore', KEYS[2], ARGV[4]) == false then
    return 0
end
redis.call('zadd', KEYS[2], ARGV[5], ARGV[4])
return 1
"""
    ),
)

PERMITS = Script(
    "permit_semaphore_permits",
    # KEYS[1] count, KEYS[2] set, KEYS[3] channel
    # ARGV[1] unused, ARGV[2] publish command, ARGV[3] now (ms)
    # Reply: {available permits, acquired permits}, after reclaiming expired ones.
    reclaim()
    + """
return {tonumber(redis.call('get', KEYS[1])) or 0, redis.call('zcard', KEYS[2])}
""",
)
