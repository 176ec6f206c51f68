"""Every Lua script redisson-py runs, in one place: the reentrant lock's here (the spin and
non-reentrant locks use them too), each other lock kind's in a module of this package
named after it.

Each read-modify-write on a lock is one script, so it is atomic on the node that owns the
lock's slot. Scripts are sent with EVALSHA; the executor falls back to EVAL when the node
answers NOSCRIPT (a restarted or newly promoted master has an empty script cache).

Data layout (Redisson's, so tools and Java clients recognise it): the lock is a hash
``{"<client uuid>:<owner id>": hold_count}`` with a PEXPIRE. redisson-py adds one field
per owner, ``redisson_py_acquire:<client uuid>:<owner id>``, holding the request id of
the owner's last acquire (see ACQUIRE); it lives and dies with the owner's hold, and
Redisson's scripts, which only ever touch their own owner field or the whole key, are
not disturbed by it. Request ids start with a letter, so a script that reads every
field as a hold count (Redisson's read-write lock does) never takes one for a number.
Every key a script touches shares the lock's hash slot (see
`redisson_py.core.routing.naming`); it is declared in KEYS unless its name is only known
inside the script (a read-write lock's per-hold timeout keys, as in Redisson).

Scripts that publish take the publish command as an argument (``publish``, or
``spublish`` on a sharded cluster); an empty one publishes nothing (the spin lock).
"""

from __future__ import annotations

from redisson_py.core.effects import Script

# --- pieces shared by several scripts (Lua, spliced in where the scripts say) ---

REQUEST_CHECK = """
local last = redis.call('hget', %(latches)s, ARGV[3])
if last == ARGV[4] then
    local held = redis.call('hget', KEYS[1], ARGV[2])
    if held ~= false then
        return {1, tonumber(held)%(extra)s}
    end
    return {2, 0}
end
if last == 'undone:' .. ARGV[4] then
    return {2, 0}
end
"""
"""The start of every acquire script (KEYS[1] the lock hash; ARGV[2] owner field,
ARGV[3] the owner's acquire-latch field, ARGV[4] this acquire's request id): an attempt
of a request already applied returns the owner's hold count and changes nothing, not
even the TTL; one whose hold is gone, or was undone, returns ``{2, 0}`` (the caller
starts a new request). ``%(extra)s`` adds fields to the granted reply;
``%(latches)s`` is the hash holding the acquire-latch field (the lock's own, but for the
read-write lock's, see `redisson_py.core.scripts.read_write_lock`)."""


def request_check(extra: str = "", latches: str = "KEYS[1]") -> str:
    """`REQUEST_CHECK` with ``extra`` (Lua, ``, value``) added to its reply, reading the
    acquire-latch field in hash ``latches`` (a Lua expression)."""
    return REQUEST_CHECK % {"extra": extra, "latches": latches}


def old_hold_check(lock: str, field: int, first: int) -> str:
    """Lua for the start of a release (after its latch check): ``return nil`` when the
    release belongs to an earlier hold of its owner than the one the lock has now.

    ``ARGV[field]`` names the owner's acquire-latch field (the request id of its last
    acquire, ``undone:``-prefixed when that one was taken back), ``ARGV[first]`` and on
    the request ids of the acquires of the hold the release is meant for (no id: no
    check, as for a release from before this rule). A release whose reply was lost can
    reach the server late, after the owner's hold expired and the owner took the lock
    again: without this check it would release the new hold behind its owner's back
    (found by the randomized nemesis: a release held up by a partition ran once it
    healed, and another client was granted the lock its owner still counted on)."""
    return f"""
if #ARGV >= {first} then
    local last = redis.call('hget', {lock}, ARGV[{field}])
    if last ~= false then
        if string.sub(last, 1, 7) == 'undone:' then
            last = string.sub(last, 8)
        end
        local ours = false
        for i = {first}, #ARGV do
            if ARGV[i] == last then
                ours = true
            end
        end
        if not ours then
            return nil
        end
    end
end
"""


MAX_TTL_MS = 2**53 - 1
"""The longest TTL (ms) a script accepts from its caller: the largest integer a Lua
number holds exactly, and far below where Redis's PEXPIRE fails (it adds the TTL to its
clock in ms in a signed 64-bit int: past about 9.2e18 ms). redisson-py's own calls
never come near it (`redisson_py.core.handles.MAX_LEASE` is 10**12 ms)."""


def ttl_guard(argument: str = "ARGV[1]") -> str:
    """Lua for the very start of a script that writes a key and then gives it the
    caller's TTL ``argument`` (a Lua expression, in ms): an error reply, before any
    write, unless it is a whole number of ms in 1..`MAX_TTL_MS` written as Redis
    reads an integer (no sign, no leading zero, no exponent). Without it a TTL that
    PEXPIRE (or SET's PX) refuses fails the script after its first writes, and Redis
    keeps them: a lock hash with no expiry, held for ever."""
    return f"""
local ttl_arg = {argument}
if type(ttl_arg) ~= 'string' or not string.find(ttl_arg, '^[1-9]%d*$')
        or tonumber(ttl_arg) > {MAX_TTL_MS} then
    return redis.error_reply('ERR redisson-py: TTL ' .. tostring(ttl_arg)
        .. ' is not a whole number of ms in 1..{MAX_TTL_MS}; nothing was written')
end
"""


def publish(channel: str, message: str, command: str) -> str:
    """Lua that publishes ``message`` on ``channel`` with ``command`` (all Lua
    expressions), unless the command is empty."""
    return f"if {command} ~= '' then redis.call({command}, {channel}, {message}) end"


ACQUIRE = Script(
    "acquire",
    # KEYS[1] lock
    # ARGV[1] the key's TTL (ms), ARGV[2] owner field, ARGV[3] the owner's acquire-latch field,
    # ARGV[4] this acquire's request id (one per logical acquire, kept across its
    #         attempts, so an attempt the server runs late is never counted twice)
    # Reply: {1, hold count} when held (granted now, or by an earlier attempt of this
    # acquire whose reply was lost: then nothing changes, not even the TTL),
    # {0, pttl of the holder's key} when another owner holds it, {2, 0} when this
    # acquire was applied and then undone, or its hold is gone (a caller still waiting
    # starts a new acquire). One key, so it also runs in a slot that is migrating.
    # A lease that is not a whole number of ms in 1..MAX_TTL_MS: an error reply, and
    # nothing written (ttl_guard).
    ttl_guard()
    + request_check()
    + """
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 and redis.call('exists', KEYS[1]) == 1 then
    return {0, redis.call('pttl', KEYS[1])}
end
local count = redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('hset', KEYS[1], ARGV[3], ARGV[4])
redis.call('pexpire', KEYS[1], ARGV[1])
return {1, count}
""",
)

ACQUIRE_NON_REENTRANT = Script(
    "acquire_non_reentrant",
    # ACQUIRE's keys, arguments and replies, and {3, 0} when the owner already holds
    # the lock (Redisson's RedissonNonReentrantLock refuses a second acquire by its
    # holder at once, with IllegalMonitorStateException).
    ttl_guard()
    + request_check()
    + """
if redis.call('exists', KEYS[1]) == 1 then
    if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
        return {3, 0}
    end
    return {0, redis.call('pttl', KEYS[1])}
end
redis.call('hset', KEYS[1], ARGV[2], 1, ARGV[3], ARGV[4])
redis.call('pexpire', KEYS[1], ARGV[1])
return {1, 1}
""",
)

UNDO_ACQUIRE = Script(
    "undo_acquire",
    # KEYS[1] lock, KEYS[2] unlock channel
    # ARGV[1] owner field, ARGV[2] the owner's acquire-latch field, ARGV[3] request id,
    # ARGV[4] unlock message, ARGV[5] publish command ("publish", "spublish" or "")
    # Takes back the hold acquire ARGV[3] applied, if it did and it is the owner's last;
    # while the owner keeps other holds, marks the acquire undone so that an attempt of
    # it the server runs later applies nothing. Idempotent.
    # Reply: 1 when a hold was taken back, 0 when there was none to take back.
    f"""
if redis.call('hget', KEYS[1], ARGV[2]) ~= ARGV[3] then
    return 0
end
if redis.call('hincrby', KEYS[1], ARGV[1], -1) <= 0 then
    redis.call('del', KEYS[1])
    {publish("KEYS[2]", "ARGV[4]", "ARGV[5]")}
else
    redis.call('hset', KEYS[1], ARGV[2], 'undone:' .. ARGV[3])
end
return 1
""",
)

RELEASE = Script(
    "release",
    # KEYS[1] lock, KEYS[2] unlock channel, KEYS[3] this request's latch
    # ARGV[1] unlock message, ARGV[2] owner field, ARGV[3] publish command
    # ("publish", "spublish" or ""), ARGV[4] latch lifetime (ms), ARGV[5] the owner's
    # acquire-latch field, ARGV[6...] the request ids of the hold released (see
    # old_hold_check; Redisson's own release passes four arguments).
    # Reply: holds left (0 = released and waiters told), or nil when the owner held none
    # (or holds another hold than the one this release is for).
    # A retry of the same request returns the first outcome from the latch. A partial
    # release leaves the TTL alone: the lease or the watchdog governs it.
    f"""
local done = redis.call('get', KEYS[3])
if done ~= false then
    return tonumber(done)
end
local held = redis.call('hget', KEYS[1], ARGV[2])
if held == false then
    return nil
end
{old_hold_check("KEYS[1]", 5, 6)}
local left = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if left <= 0 then
    left = 0
    redis.call('del', KEYS[1])
    {publish("KEYS[2]", "ARGV[1]", "ARGV[3]")}
end
redis.call('set', KEYS[3], left, 'px', ARGV[4])
return left
""",
)

RENEW = Script(
    "renew",
    # KEYS[i] lock i, all in one hash slot
    # ARGV[1] new TTL (ms), ARGV[i + 1] owner field of lock i, then optionally one flag
    # per lock, ARGV[#KEYS + 1 + i]: "0" checks lock i without renewing it (a leased
    # hold), anything else (or no flag) renews it.
    # Reply: one integer per lock, 1 when held (and renewed unless flagged "0"), 0 when
    # the owner no longer holds it.
    """
local renewed = {}
for i = 1, #KEYS do
    if redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1 then
        if ARGV[#KEYS + 1 + i] ~= '0' then
            redis.call('pexpire', KEYS[i], ARGV[1])
        end
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
    # ARGV[1] unlock message, ARGV[2] publish command ("publish", "spublish" or "")
    # Reply: 1 when a lock was deleted (and waiters told), 0 when there was none.
    f"""
if redis.call('del', KEYS[1]) == 1 then
    {publish("KEYS[2]", "ARGV[1]", "ARGV[2]")}
    return 1
end
return 0
""",
)

EXTEND = Script(
    "extend",
    # KEYS[1] lock
    # ARGV[1] new TTL (ms, from now), ARGV[2] owner field
    # Reply: the owner's hold count when it holds the lock (its key now expires ARGV[1]
    # ms from now), or nil when it holds none (nothing changes); an error reply for a
    # TTL out of range (ttl_guard).
    ttl_guard()
    + """
local held = redis.call('hget', KEYS[1], ARGV[2])
if held == false then
    return nil
end
redis.call('pexpire', KEYS[1], ARGV[1])
return tonumber(held)
""",
)
