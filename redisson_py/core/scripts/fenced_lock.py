"""The fenced lock's script (Redisson's ``RFencedLock``): the reentrant lock's acquire,
plus the lock's token counter ``redisson_lock_token:{name}`` (a plain integer key in the
lock's slot, never expiring), incremented on every first acquire, so each new holder's
token is larger than every earlier holder's.

Redisson returns the token from the acquiring script too; a reentrant acquire returns
the current token without incrementing it.
"""

from __future__ import annotations

from redisson_py.core.effects import Script
from redisson_py.core.scripts import request_check, ttl_guard

ACQUIRE_FENCED = Script(
    "acquire_fenced",
    # KEYS[1] lock, KEYS[2] token counter
    # ARGV as ACQUIRE's: the key's TTL (ms), owner field, acquire-latch field, request id.
    # Reply: {1, hold count, token} when held (a repeated attempt of the same request
    # returns the token it got), {0, pttl} when another owner holds it, {2, 0} as
    # ACQUIRE's (stale request).
    ttl_guard()
    + request_check(", tonumber(redis.call('get', KEYS[2]))")
    + """
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 and redis.call('exists', KEYS[1]) == 1 then
    return {0, redis.call('pttl', KEYS[1])}
end
local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('hset', KEYS[1], ARGV[3], ARGV[4])
redis.call('pexpire', KEYS[1], ARGV[1])
local token
if count == 1 then
    token = redis.call('incr', KEYS[2])
else
    token = tonumber(redis.call('get', KEYS[2]))
end
return {1, count, token}
""",
)

FENCE_OF_HOLDER = Script(
    "fence_of_holder",
    # KEYS[1] lock, KEYS[2] token counter
    # ARGV[1] owner field
    # Reply: {1, token} when the owner holds the lock: the counter is then its hold's
    # token (only a first acquire increments it, and none can happen while this owner
    # holds the lock); {1} when it holds the lock but there is no counter (the lock was
    # taken as a plain lock); {0} when it does not hold the lock.
    """
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
    return {0}
end
local token = redis.call('get', KEYS[2])
if not token then
    return {1}
end
return {1, token}
""",
)
