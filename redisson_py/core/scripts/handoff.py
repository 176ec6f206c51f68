"""The hold hand-off's scripts (``export_hold()`` / ``adopt_hold(token)``; see
`redisson_py.core.flows.handoff`).

The lock's own data is left as Redisson lays it out: the adopter renews and releases
the exported owner's hash field ``<client id>:<owner id>``. What hand-off adds is one
short-lived key, the adoption ticket ``redisson_py_handoff:{name}:<ticket>`` (in the
lock's slot), whose value is the exported field: it lives exactly as long as the hold
did at export, and the first adoption deletes it, so a token adopted twice (copied to
two processes) is adopted once.
"""

from __future__ import annotations

from redisson_py.core.effects import Script

TICKET_PREFIX = "redisson_py_handoff"

EXPORT = Script(
    "handoff_export",
    # KEYS[1] lock, KEYS[2] adoption ticket
    # ARGV[1] the exported owner's field, ARGV[2] a field whose presence refuses the
    # export ("" none: the read field of a write hold's owner, or the other way round)
    # Reply: {1, ttl ms} ticket written with the lock's TTL; {0, 0} the field is not
    # in the hash (or the key has no TTL left); {2, 0} the other field is there.
    """
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
    return {0, 0}
end
if ARGV[2] ~= '' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    return {2, 0}
end
local ttl = redis.call('pttl', KEYS[1])
if ttl <= 0 then
    return {0, 0}
end
redis.call('set', KEYS[2], ARGV[1], 'px', ttl)
return {1, ttl}
""",
)

ADOPT = Script(
    "handoff_adopt",
    # KEYS[1] lock, KEYS[2] adoption ticket
    # ARGV[1] the exported owner's field
    # Takes the ticket (deletes it) if it names ARGV[1] and the field is still in the
    # hash. Reply: {1, count, pttl} adopted; {0, 0, 0} no ticket (adopted already, or
    # expired with the hold); {-1, 0, 0} the field is gone (the ticket is dropped).
    """
if redis.call('get', KEYS[2]) ~= ARGV[1] then
    return {0, 0, 0}
end
redis.call('del', KEYS[2])
local count = redis.call('hget', KEYS[1], ARGV[1])
if not count then
    return {-1, 0, 0}
end
return {1, tonumber(count), redis.call('pttl', KEYS[1])}
""",
)
