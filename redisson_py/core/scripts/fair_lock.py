"""The fair lock's scripts (Redisson's ``RFairLock``, and its non-reentrant twin).

Data layout, Redisson's: the lock hash as the reentrant lock's; a list of waiting owners
``redisson_lock_queue:{name}`` (FIFO) and a sorted set ``redisson_lock_timeout:{name}``
of each waiter's timeout (wall-clock milliseconds: the time after which a waiter that
stopped retrying counts as gone). A waiter joins the tail with the timeout of the waiter
ahead of it (or the holder's TTL) plus its wait; a grant takes the head and moves every
later timeout forward by the grantee's wait; every script first drops heads whose
timeout has passed (dead waiters), so a dead waiter blocks the queue for one wait at
most (``fairLockWaitTimeout``, 5 minutes by default, or the wait time of a
``try_lock``), and heads with no timeout entry and no live keepalive (see
`_PURGE_STALE_HEADS`). An unlock wakes only the new head, on its own channel
``redisson_lock__channel:{name}:<owner field>``.

Times come from the client's clock (``ARGV`` "now"), as in Redisson, so Java and Python
waiters compare timeouts on one scale; clients' clocks should agree to well within a
wait.
"""

from __future__ import annotations

from redisson_py.core.effects import Script
from redisson_py.core.scripts import old_hold_check, publish, request_check, ttl_guard

"""redisson-py's keepalive set of a fair lock's waiters (see the module docstring)."""

KEEPALIVE_INTERVAL = 1.0
"""Longest sleep of a waiting redisson-py fair-lock waiter between two tries (seconds):
each try refreshes its alive entry."""
ALIVE_WINDOW = 5.0
"""How long after its last try a redisson-py waiter's queue entry stays (seconds)."""

_SERVER_NOW = """
local server_clock = redis.call('time')
local server_now = tonumber(server_clock[1]) * 1000 + math.floor(tonumber(server_clock[2]) / 1000)
"""
"""Lua: ``server_now``, the server's clock in ms (script effects replication, Redis 5+)."""

_PURGE_STALE_HEADS = """
while true do
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false then
        break
    end
    local timeout = redis.call('zscore', KEYS[3], head)
    local alive = redis.call('zscore', KEYS[4], head)
    if (timeout ~= false and tonumber(timeout) <= tonumber(%(now)s))
        or (alive ~= false and tonumber(alive) <= server_now and head ~= %(caller)s)
        or (timeout == false and alive == false and head ~= %(caller)s) then
        redis.call('zrem', KEYS[3], head)
        redis.call('zrem', KEYS[4], head)
        redis.call('lpop', KEYS[2])
    else
        break
    end
end
"""
"""Drop the waiters at the head whose timeout passed or whose keepalive lapsed, and a head
with neither a timeout nor a keepalive entry (KEYS[2] queue, KEYS[3] timeouts, KEYS[4]
alive entries). Every waiter, Java's and ours, joins with a timeout entry, so a head
without one was left by a partial write or a hand edit: nothing would ever drop it, and
the queue (a key without TTL) would stall for ever. A caller keeps its place: it is
alive, and its own try is what could grant it."""


def _purge(now: str, caller: str = "false") -> str:
    """Lua: `_PURGE_STALE_HEADS`; ``caller``, the owner field of the waiter running the
    script: its keepalive lapsed (a frozen server, a stalled client) but it is alive, so it
    keeps its place."""
    return _SERVER_NOW + _PURGE_STALE_HEADS % {"now": now, "caller": caller}


def _wake_head(channel: str, message: str, command: str) -> str:
    """Lua that tells the head waiter, if any, on its own channel."""
    return f"""
local next_waiter = redis.call('lindex', KEYS[2], 0)
if next_waiter ~= false then
    {publish(f"{channel} .. ':' .. next_waiter", message, command)}
end"""


ACQUIRE_FAIR = Script(
    "acquire_fair",
    # KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] alive entries
    # ARGV[1] the key's TTL (ms), ARGV[2] owner field, ARGV[3] acquire-latch field, ARGV[4]
    # request id (as ACQUIRE's), ARGV[5] this waiter's wait (ms), ARGV[6] now (ms, the
    # client's clock), ARGV[7] "1" to join the queue when not granted ("0": a try that
    # leaves no trace), ARGV[8] "1" reentrant, "0" not, ARGV[9] alive window (ms; "0":
    # no alive entry, Redisson's rule only).
    # A queued waiter's try refreshes its alive entry (server time + the window).
    # Reply: {1, hold count} granted (or by an earlier attempt of this request), {0, ms}
    # not granted: how long until it is worth trying again unwoken (the holder's TTL, or
    # when the head waiter would time out or its keepalive lapse), {2, 0} stale request
    # (as ACQUIRE's), {3, 0} the owner already holds it and the lock is not reentrant;
    # an error reply, before any write, for a lease out of range (ttl_guard).
    ttl_guard()
    + request_check()
    + _purge("ARGV[6]", caller="ARGV[2]")
    + """
local head = redis.call('lindex', KEYS[2], 0)
if redis.call('exists', KEYS[1]) == 0 and (head == false or head == ARGV[2]) then
    if head ~= false then
        redis.call('lpop', KEYS[2])
    end
    redis.call('zrem', KEYS[3], ARGV[2])
    redis.call('zrem', KEYS[4], ARGV[2])
    for _, waiter in ipairs(redis.call('zrange', KEYS[3], 0, -1)) do
        redis.call('zincrby', KEYS[3], -tonumber(ARGV[5]), waiter)
    end
    redis.call('hset', KEYS[1], ARGV[2], 1, ARGV[3], ARGV[4])
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {1, 1}
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    if ARGV[8] == '0' then
        return {3, 0}
    end
    local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('hset', KEYS[1], ARGV[3], ARGV[4])
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {1, count}
end
local ttl = redis.call('pttl', KEYS[1])
local now = tonumber(ARGV[6])
if ARGV[7] == '1' then
    local mine = redis.call('zscore', KEYS[3], ARGV[2])
    if mine == false then
        local last = redis.call('lindex', KEYS[2], -1)
        local ahead = last ~= false and redis.call('zscore', KEYS[3], last)
        local base = ttl
        if ahead then
            base = tonumber(ahead) - now
        end
        mine = base + tonumber(ARGV[5]) + now
        if redis.call('zadd', KEYS[3], mine, ARGV[2]) == 1 then
            redis.call('rpush', KEYS[2], ARGV[2])
        end
        head = redis.call('lindex', KEYS[2], 0)
    end
    local window = tonumber(ARGV[9])
    if window > 0 then
        redis.call('zadd', KEYS[4], server_now + window, ARGV[2])
        -- the key outlives this entry's timeout: marked, it never falls back to
        -- Redisson's rule while queued
        local keep = math.floor(math.max(window, tonumber(mine) - now + window))
        if redis.call('pttl', KEYS[4]) < keep then
            redis.call('pexpire', KEYS[4], keep)
        end
    end
end
local hint = ttl
if head ~= false and head ~= ARGV[2] then
    local timeout = redis.call('zscore', KEYS[3], head)
    if timeout ~= false and (hint <= 0 or tonumber(timeout) - now < hint) then
        hint = tonumber(timeout) - now
    end
    local alive = redis.call('zscore', KEYS[4], head)
    if alive ~= false and (hint <= 0 or tonumber(alive) - server_now < hint) then
        hint = tonumber(alive) - server_now
    end
end
return {0, math.max(1, hint)}
""",
)

RELEASE_FAIR = Script(
    "release_fair",
    # KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] alive entries, KEYS[5]
    # unlock channel (a waiter's is this plus ':' and its owner field), KEYS[6] this
    # request's latch
    # ARGV[1] unlock message, ARGV[2] owner field, ARGV[3] publish command, ARGV[4] latch
    # lifetime (ms), ARGV[5] now (ms), ARGV[6] acquire-latch field, ARGV[7...] the
    # request ids of the hold released (old_hold_check)
    # Reply: as RELEASE's (holds left, or nil when the owner held none). The last
    # release wakes the head waiter only; so does a release that finds the lock gone.
    """
local done = redis.call('get', KEYS[6])
if done ~= false then
    return tonumber(done)
end
"""
    + _purge("ARGV[5]")
    + """
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
    if redis.call('exists', KEYS[1]) == 0 then"""
    + _wake_head("KEYS[5]", "ARGV[1]", "ARGV[3]")
    + """
    end
    return nil
end
"""
    + old_hold_check("KEYS[1]", 6, 7)
    + """
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if left <= 0 then
    left = 0
    redis.call('del', KEYS[1])"""
    + _wake_head("KEYS[5]", "ARGV[1]", "ARGV[3]")
    + """
end
redis.call('set', KEYS[6], left, 'px', ARGV[4])
return left
""",
)

UNDO_FAIR = Script(
    "undo_fair",
    # KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] alive entries, KEYS[5]
    # unlock channel
    # ARGV[1] owner field, ARGV[2] acquire-latch field, ARGV[3] request id, ARGV[4]
    # unlock message, ARGV[5] publish command, ARGV[6] this waiter's wait (ms)
    # A wait that ends without the lock: leave the queue (the waiters behind move up by
    # this one's wait, as Redisson's acquireFailed), and take back the hold request
    # ARGV[3] applied, if it did (as UNDO_ACQUIRE). When the lock is free then, the new
    # head is woken. Idempotent. Reply: 1 when a hold was taken back, else 0.
    """
local queue = redis.call('lrange', KEYS[2], 0, -1)
local behind = false
for i = 1, #queue do
    if behind then
        redis.call('zincrby', KEYS[3], -tonumber(ARGV[6]), queue[i])
    elseif queue[i] == ARGV[1] then
        behind = true
    end
end
redis.call('zrem', KEYS[3], ARGV[1])
redis.call('zrem', KEYS[4], ARGV[1])
redis.call('lrem', KEYS[2], 0, ARGV[1])
local undone = 0
if redis.call('hget', KEYS[1], ARGV[2]) == ARGV[3] then
    undone = 1
    if redis.call('hincrby', KEYS[1], ARGV[1], -1) <= 0 then
        redis.call('del', KEYS[1])
    else
        redis.call('hset', KEYS[1], ARGV[2], 'undone:' .. ARGV[3])
    end
end
if redis.call('exists', KEYS[1]) == 0 then"""
    + _wake_head("KEYS[5]", "ARGV[4]", "ARGV[5]")
    + """
end
return undone
""",
)

FORCE_RELEASE_FAIR = Script(
    "force_release_fair",
    # KEYS[1] lock, KEYS[2] queue, KEYS[3] timeouts, KEYS[4] alive entries, KEYS[5]
    # unlock channel
    # ARGV[1] unlock message, ARGV[2] publish command, ARGV[3] now (ms)
    # Reply: 1 when a lock was deleted (and the head waiter told), 0 when there was none.
    _purge("ARGV[3]")
    + """
if redis.call('del', KEYS[1]) == 1 then"""
    + _wake_head("KEYS[5]", "ARGV[1]", "ARGV[2]")
    + """
    return 1
end
return 0
""",
)
