"""The fenced resource's script: a write that a Redis-held resource accepts only from the
holder of the highest fencing token it has seen (see `redisson_py.core.flows.fenced_resource`).

Data layout (redisson-py's own; Redisson has no fenced resource), every key in the
resource's hash slot:

- ``name``: the resource itself, a string (``set``) or a hash (``hset``), read
  and written by any Redis tool as usual;
- ``redisson_py_fence:{name}``: its fence record, a hash ``{token, owner}``: the highest
  token a write was accepted with and the owner that first wrote with it. Never expires;
- ``redisson_py_fence_latch:{name}:<request id>``: the latch of one accepted write (``1``,
  expiring after the retries of that write are over), so that a write retried after a
  lost reply is not applied twice, nor reported refused when another owner's newer write
  came in between.

Tokens are compared as decimal strings (shorter is smaller, equal lengths compare digit
by digit), so they are exact up to 2^63 - 1 where a Lua number would stop at 2^53; the
client sends them normalised (no sign, no leading zeros).
"""

from __future__ import annotations

from redisson_py.core.effects import Script

# What a fenced write does to the resource once accepted: ``set`` (ARGV[5] the value),
# ``hset`` (ARGV[5..] field, value pairs), ``del`` (no arguments).
SET = "set"
HSET = "hset"
DELETE = "del"

FENCED_WRITE = Script(
    "fenced_write",
    # KEYS[1] the resource, KEYS[2] its fence record, KEYS[3] this write's latch
    # ARGV[1] token (a normalised decimal integer), ARGV[2] the writer (an owner field),
    # ARGV[3] latch lifetime (ms), ARGV[4] operation (set, hset, del), ARGV[5..] its
    # arguments.
    # Accepted when the record is empty, or the token is larger than the recorded one, or
    # equal to it and the writer is the recorded owner (the first writer of a token keeps
    # it: two holders with one token, which a lock's failover can make, never interleave).
    # Reply: {1} accepted (now, or by an earlier attempt of this request: its latch);
    # {0, highest token, 0} refused, the token is smaller; {0, highest token, 1} refused,
    # a tie: the token was first written by another owner. A refused write changes
    # nothing. The data is written before the record, so a write Redis refuses (WRONGTYPE)
    # leaves both as they were.
    """
if redis.call('exists', KEYS[3]) == 1 then
    return {1}
end
local highest = redis.call('hget', KEYS[2], 'token')
if highest then
    if #ARGV[1] < #highest or (#ARGV[1] == #highest and ARGV[1] < highest) then
        return {0, highest, 0}
    end
    if ARGV[1] == highest and redis.call('hget', KEYS[2], 'owner') ~= ARGV[2] then
        return {0, highest, 1}
    end
end
if ARGV[4] == 'set' then
    redis.call('set', KEYS[1], ARGV[5])
elseif ARGV[4] == 'hset' then
    -- in chunks of 500 pairs: unpack() of a huge table would overflow Lua's C stack
    for i = 5, #ARGV, 1000 do
        redis.call('hset', KEYS[1], unpack(ARGV, i, math.min(i + 999, #ARGV)))
    end
else
    redis.call('del', KEYS[1])
end
redis.call('hset', KEYS[2], 'token', ARGV[1], 'owner', ARGV[2])
redis.call('set', KEYS[3], '1', 'px', ARGV[3])
return {1}
""",
)
