"""Every Lua script redisson-py runs, in one place.

Each read-modify-write on a lock is one script, so it is atomic on the node that owns the
lock's slot. Scripts are sent with EVALSHA; the executor falls back to EVAL when the node
answers NOSCRIPT (a restarted or newly promoted master has an empty script cache).

Data layout (Redisson's, so tools and Java clients recognise it): the lock is a hash
``{"<client uuid>:<owner id>": hold_count}`` with a PEXPIRE. Every key a script touches is
declared in KEYS and shares the lock's hash slot (see :mod:`redisson_py.core.naming`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Script:
    """A Lua script and its SHA1, as Redis's script cache names it."""

    name: str
    source: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.source.encode()).hexdigest())


ACQUIRE = Script(
    "acquire",
    # KEYS[1] lock
    # ARGV[1] lease (ms), ARGV[2] owner field,
    # ARGV[3] "0" on a first attempt; on a retry after a lost reply, the hold count the
    #         owner has if that first attempt was applied (then it is not applied twice).
    # Reply: {1, hold count} when acquired, {0, pttl of the holder's key} when not.
    """
local held = redis.call('hget', KEYS[1], ARGV[2])
if held == false then
    if redis.call('exists', KEYS[1]) == 1 then
        return {0, redis.call('pttl', KEYS[1])}
    end
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {1, 1}
end
if ARGV[3] ~= '0' and held == ARGV[3] then
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {1, tonumber(held)}
end
local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])
return {1, count}
""",
)

RELEASE = Script(
    "release",
    # KEYS[1] lock, KEYS[2] unlock channel, KEYS[3] this request's latch
    # ARGV[1] unlock message, ARGV[2] owner field, ARGV[3] publish command
    # ("publish" or "spublish"), ARGV[4] latch lifetime (ms), ARGV[5] "0", or the hold
    # count the owner must have for the release to apply (undoing an acquire whose
    # outcome is unknown: it is undone only if it was applied).
    # Reply: holds left (0 = released and waiters told), or nil when the owner held none.
    # A retry of the same request returns the first outcome from the latch. A partial
    # release leaves the TTL alone: the lease or the watchdog governs it.
    """
local done = redis.call('get', KEYS[3])
if done ~= false then
    return tonumber(done)
end
local held = redis.call('hget', KEYS[1], ARGV[2])
if held == false or (ARGV[5] ~= '0' and held ~= ARGV[5]) then
    return nil
end
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if left <= 0 then
    left = 0
    redis.call('del', KEYS[1])
    redis.call(ARGV[3], KEYS[2], ARGV[1])
end
redis.call('set', KEYS[3], left, 'px', ARGV[4])
return left
""",
)

RENEW = Script(
    "renew",
    # KEYS[i] lock i, all in one hash slot
    # ARGV[1] new TTL (ms), ARGV[i + 1] owner field of lock i
    # Reply: one integer per lock, 1 when renewed, 0 when the owner no longer holds it.
    """
local renewed = {}
for i = 1, #KEYS do
    if redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1 then
        redis.call('pexpire', KEYS[i], ARGV[1])
        renewed[i] = 1
    else
        renewed[i] = 0
    end
end
return renewed
""",
)

FORCE_RELEASE = Script(
    "force_release",
    # KEYS[1] lock, KEYS[2] unlock channel
    # ARGV[1] unlock message, ARGV[2] publish command
    # Reply: 1 when a lock was deleted (and waiters told), 0 when there was none.
    """
if redis.call('del', KEYS[1]) == 1 then
    redis.call(ARGV[2], KEYS[2], ARGV[1])
    return 1
end
return 0
""",
)

ALL_SCRIPTS: tuple[Script, ...] = (ACQUIRE, RELEASE, RENEW, FORCE_RELEASE)
