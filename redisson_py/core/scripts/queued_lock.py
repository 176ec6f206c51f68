"""The queued lock's scripts: a release grants the lock to the next waiter itself.

redisson-py's own kind (Java's Redisson has none like it): its auxiliary keys and
channels are prefixed ``redisson_py_queued_lock`` so they never meet Redisson's. The
lock itself is the reentrant lock's hash (``name``: ``{"<client id>:<owner id>":
count}`` plus the owner's acquire-latch field), so renewal, extension and the reads are
the reentrant lock's scripts.

Data layout, beside the hash:

- ``redisson_py_queued_lock_queue:{name}``: the waiting owners, a list, FIFO;
- ``redisson_py_queued_lock_alive:{name}``: each waiter's keepalive, a sorted set
  scored by the server time (ms) until which its entry counts as live (each try of a
  waiting owner moves it `ALIVE_WINDOW` on);
- ``redisson_py_queued_lock_entries:{name}``: each waiter's pending acquire, a hash
  ``owner -> "<request id>:<TTL ms>"``.

The last release (and an undo that takes back a grant, and a forced unlock) calls
``pass_on``: it pops waiters off the queue head until one whose keepalive has not
lapsed, writes that waiter's hold into the hash (count 1, its acquire-latch field set to
its request id, as if its own acquire had run) with a TTL of its own TTL but at most
`GRANT_TTL`, and publishes the request id on the waiter's channel
``redisson_py_queued_lock__channel:{name}:<owner>``. The waiter's ``lock()`` returns
when the message arrives; its watchdog then renews the key (the reentrant lock's
renewal: the full TTL) before the grant's TTL runs out, unless the lock was released
first. A waiter that never renews it (it died) keeps the lock `GRANT_TTL` at most; the
next try of any waiter then passes it on.

Times are the server's (``TIME``; script effects replication, Redis 5+): a waiter's
keepalive is only ever compared with the clock of the server that wrote it.
"""

from __future__ import annotations

from redisson_py.core import keyspace
from redisson_py.core.effects import Script
from redisson_py.core.scripts import old_hold_check, ttl_guard

KEEPALIVE_INTERVAL = 1.0
"""Longest sleep of a waiter between two tries (seconds): each try refreshes its entry."""
ALIVE_WINDOW = 3.0
"""How long after its last try a waiter's entry counts as live (seconds): a release
skips a waiter whose keepalive lapsed (it died, or stalled)."""
GRANT_TTL = 5.0
"""The longest TTL a grant gives the lock (seconds), until the waiter renews it: what
a waiter that died after its last try costs, at most."""

_GRANT_TTL_MS = int(GRANT_TTL * 1000)

_SERVER_NOW = """
local server_clock = redis.call('time')
local server_now = tonumber(server_clock[1]) * 1000 + math.floor(tonumber(server_clock[2]) / 1000)
"""


def _pass_on(lock: str = "KEYS[1]") -> str:
    """Lua: ``pass_on(command)``, the function that grants the free lock to the first
    live waiter (KEYS[2] queue, KEYS[3] keepalives, KEYS[4] entries, KEYS[5] channel
    prefix) and tells it with ``command`` (``publish``/``spublish``; "" tells nobody);
    the owner granted, or false. Needs ``server_now``."""
    return f"""
local function pass_on(command)
    while true do
        local head = redis.call('lpop', KEYS[2])
        if head == false or head == nil then
            return false
        end
        local alive = redis.call('zscore', KEYS[3], head)
        local entry = redis.call('hget', KEYS[4], head)
        redis.call('zrem', KEYS[3], head)
        redis.call('hdel', KEYS[4], head)
        if alive ~= false and tonumber(alive) > server_now and entry ~= false then
            local sep = string.find(entry, ':', 1, true)
            local request = string.sub(entry, 1, sep - 1)
            local ttl = math.min(tonumber(string.sub(entry, sep + 1)), {_GRANT_TTL_MS})
            redis.call('hset', {lock}, head, 1, '{keyspace.ACQUIRE_FIELD_PREFIX}' .. head, request)
            redis.call('pexpire', {lock}, ttl)
            if command ~= '' then
                redis.call(command, KEYS[5] .. ':' .. head, request)
            end
            return head
        end
    end
end
"""


_LEAVE = """
redis.call('lrem', KEYS[2], 0, ARGV[%(owner)s])
redis.call('zrem', KEYS[3], ARGV[%(owner)s])
redis.call('hdel', KEYS[4], ARGV[%(owner)s])
"""
"""Lua: take owner ``ARGV[owner]`` out of the queue."""
_LEAVE_CALLER = _LEAVE % {"owner": 2}


ACQUIRE_QUEUED = Script(
    "acquire_queued",
    # KEYS[1] lock, KEYS[2] queue, KEYS[3] keepalives, KEYS[4] entries,
    # KEYS[5] channel prefix (a waiter's channel is KEYS[5] .. ':' .. owner)
    # ARGV[1] TTL (ms), ARGV[2] owner field, ARGV[3] the owner's acquire-latch field,
    # ARGV[4] request id, ARGV[5] "1" to queue when refused (else try only),
    # ARGV[6] keepalive window (ms), ARGV[7] "1" reentrant / "0" not,
    # ARGV[8] publish command (a free lock found with live waiters ahead is passed on)
    # Reply (lock_kinds' protocol): {1, count} held (by this request: granted now, by
    # an earlier attempt, or by a release that passed it on, whose grant this attempt
    # takes up: the key gets ARGV[1] if its TTL is shorter); {0, pttl} refused (the
    # owner waits in the queue with ARGV[5] = "1"); {2, 0} this request's hold is gone
    # or was undone; {3, 0} a non-reentrant lock's holder asked again.
    ttl_guard()
    + _SERVER_NOW
    + _pass_on()
    + f"""
local last = redis.call('hget', KEYS[1], ARGV[3])
if last == ARGV[4] then
    local held = redis.call('hget', KEYS[1], ARGV[2])
    if held ~= false then
        if redis.call('pttl', KEYS[1]) < tonumber(ARGV[1]) then
            redis.call('pexpire', KEYS[1], ARGV[1])
        end
        return {{1, tonumber(held)}}
    end
    return {{2, 0}}
end
if last == 'undone:' .. ARGV[4] then
    return {{2, 0}}
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    if ARGV[7] == '0' then
        return {{3, 0}}
    end
    local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('hset', KEYS[1], ARGV[3], ARGV[4])
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {{1, count}}
end
-- drop lapsed waiters at the head (not the caller: it is alive, it is asking)
while true do
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false or head == ARGV[2] then
        break
    end
    local alive = redis.call('zscore', KEYS[3], head)
    if alive ~= false and tonumber(alive) > server_now then
        break
    end
    redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], head)
    redis.call('hdel', KEYS[4], head)
end
if redis.call('exists', KEYS[1]) == 0 then
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false or head == ARGV[2] then
        {_LEAVE_CALLER}
        redis.call('hset', KEYS[1], ARGV[2], 1, ARGV[3], ARGV[4])
        redis.call('pexpire', KEYS[1], ARGV[1])
        return {{1, 1}}
    end
end
if ARGV[5] == '1' then
    if redis.call('zscore', KEYS[3], ARGV[2]) == false then
        redis.call('lrem', KEYS[2], 0, ARGV[2])
        redis.call('rpush', KEYS[2], ARGV[2])
    end
    redis.call('zadd', KEYS[3], server_now + tonumber(ARGV[6]), ARGV[2])
    redis.call('hset', KEYS[4], ARGV[2], ARGV[4] .. ':' .. ARGV[1])
    -- the queue's keys outlive their last live waiter a little, then go
    local idle = tonumber(ARGV[6]) * 2 + {_GRANT_TTL_MS}
    redis.call('pexpire', KEYS[2], idle)
    redis.call('pexpire', KEYS[3], idle)
    redis.call('pexpire', KEYS[4], idle)
end
if redis.call('exists', KEYS[1]) == 0 then
    -- free, with a live waiter ahead (the holder's key expired): pass it on now
    pass_on(ARGV[8])
end
return {{0, redis.call('pttl', KEYS[1])}}
""",
)

UNDO_QUEUED = Script(
    "undo_queued",
    # KEYS as ACQUIRE_QUEUED's
    # ARGV[1] owner field, ARGV[2] the owner's acquire-latch field, ARGV[3] request id,
    # ARGV[4] publish command
    # Leaves the queue; takes back the hold request ARGV[3] got, if it got one (its own
    # grant, or one a release passed on to it): a last hold taken back passes the lock
    # on to the next live waiter. Idempotent. Reply: 1 when a hold was taken back, else 0.
    _SERVER_NOW
    + _pass_on()
    + _LEAVE % {"owner": 1}
    + """
if redis.call('hget', KEYS[1], ARGV[2]) ~= ARGV[3] then
    return 0
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) <= 0 then
    redis.call('del', KEYS[1])
    pass_on(ARGV[4])
else
    redis.call('hset', KEYS[1], ARGV[2], 'undone:' .. ARGV[3])
end
return 1
""",
)

RELEASE_QUEUED = Script(
    "release_queued",
    # KEYS[1..5] as ACQUIRE_QUEUED's, KEYS[6] this request's latch
    # ARGV[1] owner field, ARGV[2] publish command, ARGV[3] latch lifetime (ms),
    # ARGV[4] the owner's acquire-latch field, ARGV[5...] the request ids of the hold
    # released (see old_hold_check)
    # Reply: holds left (0: released, and passed on to the first live waiter if any),
    # or nil when the owner held none. A retry returns the first outcome (the latch).
    _SERVER_NOW
    + _pass_on()
    + f"""
local done = redis.call('get', KEYS[6])
if done ~= false then
    return tonumber(done)
end
if redis.call('hget', KEYS[1], ARGV[1]) == false then
    return nil
end
{old_hold_check("KEYS[1]", 4, 5)}
local left = redis.call('hincrby', KEYS[1], ARGV[1], -1)
if left <= 0 then
    left = 0
    redis.call('del', KEYS[1])
    pass_on(ARGV[2])
end
redis.call('set', KEYS[6], left, 'px', ARGV[3])
return left
""",
)

FORCE_RELEASE_QUEUED = Script(
    "force_release_queued",
    # KEYS as ACQUIRE_QUEUED's; ARGV[1] publish command
    # Deletes the lock whoever holds it and passes it on to the first live waiter.
    # Reply: 1 when a lock was deleted, 0 when there was none.
    _SERVER_NOW
    + _pass_on()
    + """
if redis.call('del', KEYS[1]) == 1 then
    pass_on(ARGV[1])
    return 1
end
return 0
""",
)
