"""The semaphore's scripts (Redisson's ``RSemaphore``).

Data layout, Redisson's: the number of available permits is a plain integer string at
the key ``name`` (no key: 0 permits, nothing set yet); a change that makes permits
available publishes the new count (a decimal integer) on ``redisson_sc:{name}``, and a
waiting client wakes that many of its waiters at most. redisson-py adds only the latch
keys of `redisson_py.core.scripts.synchronizers`, so that no call counts twice.

Every script's keys end with the request's latch and its first argument is the latch
lifetime (ms); scripts that publish take the publish command (``publish``,
``spublish``, or ``""``: nothing) as their second argument.
"""

from __future__ import annotations

from redisson_py.core.effects import Script
from redisson_py.core.scripts import publish
from redisson_py.core.scripts.synchronizers import GRANT_CHECK, GRANTED, UNDO_CHECK, remembered

ACQUIRE = Script(
    "semaphore_acquire",
    # KEYS[1] semaphore, KEYS[2] this acquire's latch
    # ARGV[1] latch lifetime (ms), ARGV[2] publish command (unused), ARGV[3] permits
    # Reply: {1, 0} taken (now, or by an earlier attempt of this acquire: then nothing
    # changes), {0, -1} too few permits, {2, 0} this acquire was undone.
    GRANT_CHECK
    + """
local available = tonumber(redis.call('get', KEYS[1]))
if available == nil or available < tonumber(ARGV[3]) then
    return {0, -1}
end
redis.call('decrby', KEYS[1], ARGV[3])
"""
    + GRANTED,
)

UNDO_ACQUIRE = Script(
    "semaphore_undo_acquire",
    # KEYS[1] semaphore, KEYS[2] channel, KEYS[3] the acquire's latch
    # ARGV[1] latch lifetime (ms), ARGV[2] publish command, ARGV[3] permits
    # Gives back the permits the acquire took, if it did, announcing the new count; an
    # attempt of it the server runs afterwards takes nothing. Idempotent.
    # Reply: 1 when permits were given back, else 0.
    UNDO_CHECK
    + f"""
local available = redis.call('incrby', KEYS[1], ARGV[3])
{publish("KEYS[2]", "available", "ARGV[2]")}
return 1
""",
)

RELEASE = Script(
    "semaphore_release",
    # KEYS[1] semaphore, KEYS[2] channel, KEYS[3] this release's latch
    # ARGV[1] latch lifetime (ms), ARGV[2] publish command, ARGV[3] permits,
    # ARGV[4] "1": only if the semaphore exists (else nothing changes)
    # Reply: the count after the release, or -1 when ARGV[4] asked for an existing
    # semaphore and there was none.
    remembered(
        f"""
if ARGV[4] == '1' and redis.call('exists', KEYS[1]) == 0 then
    return -1
end
local available = redis.call('incrby', KEYS[1], ARGV[3])
{publish("KEYS[2]", "available", "ARGV[2]")}
return available
"""
    ),
)

ADD_PERMITS = Script(
    "semaphore_add_permits",
    # KEYS[1] semaphore (permit count), KEYS[2] channel, KEYS[3] this call's latch
    # ARGV[1] latch lifetime (ms), ARGV[2] publish command, ARGV[3] permits to add
    # (negative: take away), ARGV[4] what to announce: "count", the new count
    # (RSemaphore's), or "added", the permits added when positive
    # (RPermitExpirableSemaphore's).
    # Reply: the new count.
    remembered(
        f"""
local available = (tonumber(redis.call('get', KEYS[1])) or 0) + tonumber(ARGV[3])
redis.call('set', KEYS[1], available)
if ARGV[4] == 'count' then
    {publish("KEYS[2]", "available", "ARGV[2]")}
elseif tonumber(ARGV[3]) > 0 then
    {publish("KEYS[2]", "ARGV[3]", "ARGV[2]")}
end
return available
"""
    ),
)

DRAIN_PERMITS = Script(
    "semaphore_drain_permits",
    # KEYS[1] semaphore, KEYS[2] this call's latch
    # ARGV[1] latch lifetime (ms), ARGV[2] publish command (unused)
    # Sets the count to 0 (when the key exists). Reply: the count it had.
    remembered(
        """
local available = tonumber(redis.call('get', KEYS[1]))
if available == nil then
    return 0
end
redis.call('set', KEYS[1], 0)
return available
"""
    ),
)
