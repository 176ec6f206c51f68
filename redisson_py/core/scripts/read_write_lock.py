"""The read-write lock's scripts (Redisson's ``RReadWriteLock``).

Data layout, Redisson's: one hash ``name`` with a field ``mode`` (``read`` or ``write``);
a writer's field is ``<client id>:<owner id>:write``, a reader's ``<client id>:<owner
id>``, each holding a hold count. Every read hold also has its own key
``{name}:<owner field>:rwlock_timeout:<n>`` (n = 1 .. the reader's hold count) that
expires with that hold's lease, so a dead reader's hold runs out on its own: the hash
lives as long as its longest read hold (or its write hold). Readers share; a writer
excludes everyone but itself, and may take read holds too (the lock then stays in
``write`` mode until the writer's last write unlock turns it to ``read``).

Channel ``redisson_rwlock:{name}``: a read unlock that frees the lock publishes ``0``
(wakes one waiter), a write unlock publishes ``1``, which wakes every waiter (the
readers among them may all enter). Redisson publishes nothing when a write unlock leaves
the writer's own read holds; redisson-py publishes ``1`` then too, so readers waiting
elsewhere enter at once rather than after the holder's TTL.

redisson-py's acquire-latch fields (the request id of each owner's last acquire, see
`redisson_py.core.scripts`) live in a hash of their own, ``redisson_py_acquire:{name}``
(`redisson_py.core.keyspace.acquire_latches`), not in the lock's hash: Redisson's
``RReadLock.isLocked()`` counts the hash's fields (``mode`` is ``write`` and ``hlen > 2``
reads as "read-locked"), so a field of ours beside a writer's would make a redisson-py
writer look like a writer that also reads. That hash lives at least as long as the
lock's (`_KEEP_LATCHES`) and goes with it.

A script that must find every reader's timeout keys builds their names from the hash's
fields, as Redisson's do (they cannot be declared in KEYS; they share the lock's slot).
It takes a field's value for a hold count only when it reads as a number, so the
request-id fields redisson-py adds (see `redisson_py.core.scripts`) never count.

A reader's field can outlive its holds: a lease (or a stalled watchdog) runs out while
another reader keeps the hash alive. redisson-py's scripts then treat the owner as
holding nothing: its next acquire starts again from one hold, its unlock and ``extend``
find no hold, and the watchdog reports the hold lost at its next round.
"""

from __future__ import annotations

from redisson_py.core import keyspace
from redisson_py.core.effects import Script
from redisson_py.core.scripts import old_hold_check, publish, request_check, ttl_guard


def _read_holds(lua: str) -> str:
    """``lua`` with ``<read_hold_timeout>`` spelled as the keyspace names a read hold's
    timeout keys (``{name}:<owner field>:rwlock_timeout:<n>``, see
    `redisson_py.core.keyspace.read_hold_timeout_prefix`)."""
    return lua.replace("<read_hold_timeout>", keyspace.READ_HOLD_TIMEOUT)


_SETTLE_AFTER_READ_RELEASE = _read_holds("""
if redis.call('hget', KEYS[1], 'mode') ~= 'write' then
    local longest = -3
    for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
        local count = tonumber(redis.call('hget', KEYS[1], field))
        if count ~= nil then
            for i = count, 1, -1 do
                local hold = %(key_prefix)s .. ':' .. field .. ':<read_hold_timeout>:' .. i
                longest = math.max(longest, redis.call('pttl', hold))
            end
        end
    end
    if longest > 0 then
        redis.call('pexpire', KEYS[1], longest)
    else
        redis.call('del', KEYS[1])
        %(publish)s
    end
end
""")
"""After a read hold went, in read mode: the hash lives as long as the longest read hold
left (a dead reader's hold no longer counts once its timeout key is gone); with none
left it is deleted and a waiter woken. In write mode the writer's hold keeps it as it is
(a read acquire never leaves the hash shorter-lived than a read hold)."""

_HOLDS_ALIVE = """
local function holds_alive(prefix, count)
    for i = 1, count do
        if redis.call('exists', prefix .. ':' .. i) == 1 then
            return true
        end
    end
    return false
end
"""
"""Defines ``holds_alive(prefix, count)``: does any of an owner's read holds 1 ..
``count`` (timeout keys ``prefix:<n>``) still run? When none does, the owner's field
outlived its holds (leases that ran out, or a watchdog that stalled, while another hold
kept the hash alive) and counts for nothing: not as holds to add to or release, nor as a
hold to renew."""

_KEEP_LATCHES = """
local function keep_latches(lock, latches)
    local ttl = redis.call('pttl', lock)
    if ttl == -2 then
        redis.call('del', latches)
    elseif ttl > 0 and redis.call('exists', latches) == 1 then
        redis.call('pexpire', latches, math.max(ttl, redis.call('pttl', latches)))
    end
end
"""
"""Defines ``keep_latches(lock, latches)``, called after a script changed the lock's
expiry: the acquire-latch hash ``latches`` lives at least as long as the lock (a release
held up in a partition still finds the request ids it is checked against), and goes
when the lock went."""

_DROP_TIMEOUT_KEYS = _read_holds("""
local function drop_timeout_keys(lock, prefix)
    for _, field in ipairs(redis.call('hkeys', lock)) do
        local count = tonumber(redis.call('hget', lock, field))
        if field ~= 'mode' and count ~= nil then
            for i = 1, count do
                redis.call('del', prefix .. ':' .. field .. ':<read_hold_timeout>:' .. i)
            end
        end
    end
end
""")
"""Defines ``drop_timeout_keys(lock, prefix)``: delete the timeout keys of every hold the
hash ``lock`` counts (``prefix`` the key prefix ``{name}``), before a forced unlock
deletes the hash; Redisson's leaves them to expire."""

_HOLDERS_LEFT = """
local holders = false
for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
    if field ~= 'mode' and tonumber(redis.call('hget', KEYS[1], field)) ~= nil then
        holders = true
        break
    end
end
"""
"""Sets ``holders``: does any field of the hash still count holds?"""


def _after_write_release(message: str, command: str) -> str:
    """After a writer's last write hold went: the lock is free (deleted) unless the
    writer keeps read holds (then it is in ``read`` mode); waiters are woken either way."""
    return (
        _HOLDERS_LEFT
        + f"""
if holders then
    redis.call('hset', KEYS[1], 'mode', 'read')
else
    redis.call('del', KEYS[1])
end
{publish("KEYS[2]", message, command)}
"""
    )


ACQUIRE_READ = Script(
    "acquire_read",
    # KEYS[1] lock, KEYS[2] this reader's timeout-key prefix
    # ({name}:<owner field>:rwlock_timeout), KEYS[3] the acquire-latch hash
    # ARGV[1] the key's TTL (ms), ARGV[2] owner field, ARGV[3] acquire-latch field, ARGV[4]
    # request id (as ACQUIRE's), ARGV[5] the same owner's write field
    # Reply: as ACQUIRE's. Granted while the lock is free, in read mode, or write-held
    # by this same owner. A field of the owner's whose holds all ran out is dropped
    # first, so the new hold is its first. A lease out of range: an error reply, before
    # any write (ttl_guard).
    ttl_guard()
    + request_check(latches="KEYS[3]")
    + _HOLDS_ALIVE
    + _KEEP_LATCHES
    + """
local own = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if own ~= nil and not holds_alive(KEYS[2], own) then
    redis.call('hdel', KEYS[1], ARGV[2])
end
local mode = redis.call('hget', KEYS[1], 'mode')
local writer = mode == 'write' and redis.call('hexists', KEYS[1], ARGV[5]) == 1
if mode == false or mode == 'read' or writer then
    if mode == false then
        redis.call('hset', KEYS[1], 'mode', 'read')
    end
    local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('set', KEYS[2] .. ':' .. count, 1, 'px', ARGV[1])
    redis.call('hset', KEYS[3], ARGV[3], ARGV[4])
    redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), tonumber(ARGV[1])))
    keep_latches(KEYS[1], KEYS[3])
    return {1, count}
end
return {0, redis.call('pttl', KEYS[1])}
""",
)

ACQUIRE_WRITE = Script(
    "acquire_write",
    # KEYS[1] lock, KEYS[2] the acquire-latch hash
    # ARGV[1] the key's TTL (ms), ARGV[2] write field, ARGV[3] acquire-latch field, ARGV[4]
    # request id (as ACQUIRE's)
    # Reply: as ACQUIRE's. Granted while the lock is free, or write-held by this owner
    # (a reentrant write keeps the longer of the key's TTL and the lease). The hash of a
    # lone writer is {mode, write field}, as a Java writer's. A lease out of range: an
    # error reply, before any write (ttl_guard).
    ttl_guard()
    + request_check(latches="KEYS[2]")
    + _KEEP_LATCHES
    + """
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
    redis.call('hset', KEYS[2], ARGV[3], ARGV[4])
    redis.call('pexpire', KEYS[1], ARGV[1])
    keep_latches(KEYS[1], KEYS[2])
    return {1, 1}
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('hset', KEYS[2], ARGV[3], ARGV[4])
    redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), tonumber(ARGV[1])))
    keep_latches(KEYS[1], KEYS[2])
    return {1, count}
end
return {0, redis.call('pttl', KEYS[1])}
""",
)

_FORGET_LAST_READ = """if left <= 0 then
    left = 0
    redis.call('hdel', KEYS[1], ARGV[2])
    redis.call('hdel', %(latches)s, ARGV[5])
end
"""
"""With ``left`` read holds of ARGV[2] left: at none, drop its field and its
acquire-latch field ARGV[5] in the hash ``%(latches)s``."""

_READ_RELEASE_ONE = (
    """
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
redis.call('del', KEYS[3] .. ':' .. (left + 1))
"""
    + _FORGET_LAST_READ
)
"""Take one read hold of ARGV[2] (KEYS[3] its timeout-key prefix; ARGV[5] its
acquire-latch field in the hash ``%(latches)s``, dropped with its last hold); sets
``left``."""

_READ_RELEASE_SHORTEST = (
    """
local held = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
local drop, soonest = held, nil
for i = 1, held do
    local ttl = redis.call('pttl', KEYS[3] .. ':' .. i)
    if ttl == -2 then
        drop = i
        break
    end
    if ttl >= 0 and (soonest == nil or ttl < soonest) then
        drop, soonest = i, ttl
    end
end
redis.call('del', KEYS[3] .. ':' .. drop)
if drop ~= held and redis.call('exists', KEYS[3] .. ':' .. held) == 1 then
    redis.call('rename', KEYS[3] .. ':' .. held, KEYS[3] .. ':' .. drop)
end
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
"""
    + _FORGET_LAST_READ
)
"""Release one read hold of ARGV[2] (KEYS[3] its timeout-key prefix; ARGV[5] its
acquire-latch field in the hash ``%(latches)s``, dropped with its last hold); sets
``left``. The owner's holds are alike, so the one released is the one that ends first
(a timeout key already gone, else the shortest TTL), and the holds left keep the longest
leases, as a reentrant lock's key keeps its last TTL: releasing the newest instead
(Redisson's rule) kept an older, shorter lease after a relock with a longer one, and the
hold ran out while its owner counted on the longer lease (a writer was then granted). The
last hold's key moves into the freed place (RENAME keeps its TTL), so the holds' keys
stay numbered 1 .. ``left``."""

RELEASE_READ = Script(
    "release_read",
    # KEYS[1] lock, KEYS[2] channel, KEYS[3] this reader's timeout-key prefix, KEYS[4]
    # the prefix of every reader's timeout keys ({name}), KEYS[5] this request's latch,
    # KEYS[6] the acquire-latch hash
    # ARGV[1] message (0), ARGV[2] owner field, ARGV[3] publish command, ARGV[4] latch
    # lifetime (ms), ARGV[5] acquire-latch field, ARGV[6...] the request ids of the
    # hold released (old_hold_check)
    # Reply: as RELEASE's (this owner's read holds left, or nil when it held none: also
    # when its field outlived every hold it counted, which then goes).
    _HOLDS_ALIVE
    + _KEEP_LATCHES
    + """
local done = redis.call('get', KEYS[5])
if done ~= false then
    return tonumber(done)
end
if redis.call('hget', KEYS[1], 'mode') == false or redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
    return nil
end
"""
    + old_hold_check("KEYS[6]", 5, 6)
    + """
local own = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if own == nil or not holds_alive(KEYS[3], own) then
    redis.call('hdel', KEYS[1], ARGV[2])
    redis.call('hdel', KEYS[6], ARGV[5])
"""
    + _SETTLE_AFTER_READ_RELEASE
    % {"key_prefix": "KEYS[4]", "publish": publish("KEYS[2]", "ARGV[1]", "ARGV[3]")}
    + """
    keep_latches(KEYS[1], KEYS[6])
    return nil
end
"""
    + _READ_RELEASE_SHORTEST % {"latches": "KEYS[6]"}
    + _SETTLE_AFTER_READ_RELEASE
    % {"key_prefix": "KEYS[4]", "publish": publish("KEYS[2]", "ARGV[1]", "ARGV[3]")}
    + """
keep_latches(KEYS[1], KEYS[6])
redis.call('set', KEYS[5], left, 'px', ARGV[4])
return left
""",
)

UNDO_READ = Script(
    "undo_read",
    # KEYS[1] lock, KEYS[2] channel, KEYS[3] this reader's timeout-key prefix, KEYS[4]
    # every reader's prefix, KEYS[5] the acquire-latch hash
    # ARGV[1] message (0), ARGV[2] owner field, ARGV[3] publish command, ARGV[4] request
    # id, ARGV[5] acquire-latch field
    # Takes back the read hold request ARGV[4] applied, if it did (as UNDO_ACQUIRE).
    # Reply: 1 when a hold was taken back, else 0.
    _KEEP_LATCHES
    + """
if redis.call('hget', KEYS[5], ARGV[5]) ~= ARGV[4] then
    return 0
end
"""
    + _READ_RELEASE_ONE % {"latches": "KEYS[5]"}
    + """
if left > 0 then
    redis.call('hset', KEYS[5], ARGV[5], 'undone:' .. ARGV[4])
end
"""
    + _SETTLE_AFTER_READ_RELEASE
    % {"key_prefix": "KEYS[4]", "publish": publish("KEYS[2]", "ARGV[1]", "ARGV[3]")}
    + """
keep_latches(KEYS[1], KEYS[5])
return 1
""",
)

RELEASE_WRITE = Script(
    "release_write",
    # KEYS[1] lock, KEYS[2] channel, KEYS[3] this request's latch, KEYS[4] the
    # acquire-latch hash
    # ARGV[1] message (1), ARGV[2] write field, ARGV[3] publish command, ARGV[4] latch
    # lifetime (ms), ARGV[5] acquire-latch field, ARGV[6...] the request ids of the hold
    # released (old_hold_check)
    # Reply: as RELEASE's (write holds left, or nil when the owner held none).
    _KEEP_LATCHES
    + """
local done = redis.call('get', KEYS[3])
if done ~= false then
    return tonumber(done)
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode ~= 'write' or redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
    return nil
end
"""
    + old_hold_check("KEYS[4]", 5, 6)
    + """
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if left <= 0 then
    left = 0
    redis.call('hdel', KEYS[1], ARGV[2])
    redis.call('hdel', KEYS[4], ARGV[5])"""
    + _after_write_release("ARGV[1]", "ARGV[3]")
    + """
end
keep_latches(KEYS[1], KEYS[4])
redis.call('set', KEYS[3], left, 'px', ARGV[4])
return left
""",
)

UNDO_WRITE = Script(
    "undo_write",
    # KEYS[1] lock, KEYS[2] channel, KEYS[3] the acquire-latch hash
    # ARGV[1] message (1), ARGV[2] write field, ARGV[3] publish command, ARGV[4] request
    # id, ARGV[5] acquire-latch field
    # Takes back the write hold request ARGV[4] applied, if it did (as UNDO_ACQUIRE).
    # Reply: 1 when a hold was taken back, else 0.
    _KEEP_LATCHES
    + """
if redis.call('hget', KEYS[3], ARGV[5]) ~= ARGV[4] then
    return 0
end
if redis.call('hincrby', KEYS[1], ARGV[2], -1) <= 0 then
    redis.call('hdel', KEYS[1], ARGV[2])
    redis.call('hdel', KEYS[3], ARGV[5])"""
    + _after_write_release("ARGV[1]", "ARGV[3]")
    + """
else
    redis.call('hset', KEYS[3], ARGV[5], 'undone:' .. ARGV[4])
end
keep_latches(KEYS[1], KEYS[3])
return 1
""",
)

RENEW_READ = Script(
    "renew_read",
    # KEYS[i] lock i, KEYS[n + i] lock i's acquire-latch hash (n = #KEYS / 2), all in
    # one hash slot
    # ARGV[1] new TTL (ms), ARGV[1 + i] owner field of lock i, ARGV[1 + n + i] the
    # prefix of lock i's timeout keys ({name}), then optionally one flag per lock,
    # ARGV[1 + 2n + i]: "0" checks without renewing (a leased hold), as RENEW's.
    # Renews the owner's own timeout keys and keeps the hash at least that long (Redisson
    # renews every reader's keys, which keeps a dead reader's hold alive; this does not).
    # Reply: one integer per lock, 1 when the owner holds a read hold, else 0 (also when
    # its field is there but none of its timeout keys is: its holds ran out).
    _HOLDS_ALIVE
    + _KEEP_LATCHES
    + _read_holds(
        """
local n = #KEYS / 2
local renewed = {}
for i = 1, n do
    local count = tonumber(redis.call('hget', KEYS[i], ARGV[1 + i]))
    local prefix = ARGV[1 + n + i] .. ':' .. ARGV[1 + i] .. ':<read_hold_timeout>'
    if count ~= nil and count > 0 and holds_alive(prefix, count) then
        if ARGV[1 + 2 * n + i] ~= '0' then
            for j = 1, count do
                redis.call('pexpire', prefix .. ':' .. j, ARGV[1])
            end
            redis.call('pexpire', KEYS[i], math.max(redis.call('pttl', KEYS[i]), tonumber(ARGV[1])))
            keep_latches(KEYS[i], KEYS[n + i])
        end
        renewed[i] = 1
    else
        renewed[i] = 0
    end
end
return renewed
"""
    ),
)

RENEW_WRITE = Script(
    "renew_write",
    # KEYS[i] lock i, KEYS[n + i] lock i's acquire-latch hash (n = #KEYS / 2), all in
    # one hash slot
    # ARGV[1] new TTL (ms), ARGV[1 + i] write field of lock i, then optionally one flag
    # per lock, ARGV[1 + n + i]: "0" checks without renewing (a leased hold), as RENEW's.
    # Reply: as RENEW's.
    _KEEP_LATCHES
    + """
local n = #KEYS / 2
local renewed = {}
for i = 1, n do
    if redis.call('hexists', KEYS[i], ARGV[1 + i]) == 1 then
        if ARGV[1 + n + i] ~= '0' then
            redis.call('pexpire', KEYS[i], ARGV[1])
            keep_latches(KEYS[i], KEYS[n + i])
        end
        renewed[i] = 1
    else
        renewed[i] = 0
    end
end
return renewed
""",
)

EXTEND_READ = Script(
    "extend_read",
    # KEYS[1] lock, KEYS[2] this reader's timeout-key prefix, KEYS[3] the acquire-latch
    # hash
    # ARGV[1] new TTL (ms, from now), ARGV[2] owner field
    # Reply: the owner's read hold count (its holds now expire ARGV[1] ms from now, and
    # the hash no sooner), or nil when it holds none (or its holds all ran out); an
    # error reply for a TTL out of range (ttl_guard).
    ttl_guard()
    + _HOLDS_ALIVE
    + _KEEP_LATCHES
    + """
local count = tonumber(redis.call('hget', KEYS[1], ARGV[2]))
if count == nil or not holds_alive(KEYS[2], count) then
    return nil
end
for j = 1, count do
    redis.call('pexpire', KEYS[2] .. ':' .. j, ARGV[1])
end
redis.call('pexpire', KEYS[1], math.max(redis.call('pttl', KEYS[1]), tonumber(ARGV[1])))
keep_latches(KEYS[1], KEYS[3])
return count
""",
)

EXTEND_WRITE = Script(
    "extend_write",
    # KEYS[1] lock, KEYS[2] the acquire-latch hash
    # ARGV[1] new TTL (ms, from now), ARGV[2] write field
    # Reply: as EXTEND's (the writer's hold count, or nil when it holds none).
    ttl_guard()
    + _KEEP_LATCHES
    + """
local held = redis.call('hget', KEYS[1], ARGV[2])
if held == false then
    return nil
end
redis.call('pexpire', KEYS[1], ARGV[1])
keep_latches(KEYS[1], KEYS[2])
return tonumber(held)
""",
)

FORCE_RELEASE_READ = Script(
    "force_release_read",
    # KEYS[1] lock, KEYS[2] channel, KEYS[3] the prefix of every reader's timeout keys
    # ({name}), KEYS[4] the acquire-latch hash; ARGV[1] message (0), ARGV[2] publish
    # command
    # Reply: 1 when the lock was read-held and is now deleted, with its read holds'
    # timeout keys (waiters told), else 0.
    _DROP_TIMEOUT_KEYS
    + f"""
if redis.call('hget', KEYS[1], 'mode') == 'read' then
    drop_timeout_keys(KEYS[1], KEYS[3])
    redis.call('del', KEYS[1], KEYS[4])
    {publish("KEYS[2]", "ARGV[1]", "ARGV[2]")}
    return 1
end
return 0
""",
)

FORCE_RELEASE_WRITE = Script(
    "force_release_write",
    # KEYS[1] lock, KEYS[2] channel, KEYS[3] the prefix of every reader's timeout keys
    # ({name}), KEYS[4] the acquire-latch hash; ARGV[1] message (1), ARGV[2] publish
    # command
    # Reply: 1 when the lock was write-held and is now deleted, with the timeout keys of
    # the writer's own read holds (waiters told), else 0.
    _DROP_TIMEOUT_KEYS
    + f"""
if redis.call('hget', KEYS[1], 'mode') == 'write' then
    drop_timeout_keys(KEYS[1], KEYS[3])
    redis.call('del', KEYS[1], KEYS[4])
    {publish("KEYS[2]", "ARGV[1]", "ARGV[2]")}
    return 1
end
return 0
""",
)

IS_READ_LOCKED = Script(
    "is_read_locked",
    # KEYS[1] lock. Reply: 1 when some owner holds a read hold (in read mode, or the
    # writer's own read holds in write mode), else 0.
    """
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == 'read' then
    return 1
end
if mode == 'write' then
    for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
        local reader = field ~= 'mode' and string.sub(field, -6) ~= ':write'
        if reader and tonumber(redis.call('hget', KEYS[1], field)) ~= nil then
            return 1
        end
    end
end
return 0
""",
)

READ_HOLD_COUNT = Script(
    "read_hold_count",
    # KEYS[1] lock, KEYS[2] this reader's timeout-key prefix; ARGV[1] owner field
    # Reply: the owner's read hold count, 0 when it has none, or its field outlived
    # every hold it counted (see holds_alive).
    _HOLDS_ALIVE
    + """
local count = tonumber(redis.call('hget', KEYS[1], ARGV[1]))
if count == nil or not holds_alive(KEYS[2], count) then
    return 0
end
return count
""",
)
