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

from enum import IntEnum

from redisson_py.core.effects import Script


class ExportReply(IntEnum):
    """The first element of `EXPORT`'s reply."""

    NOT_HELD = 0
    """The field is not in the hash (or the key has no TTL left): nothing exported."""
    EXPORTED = 1
    """The ticket is written, with the lock's TTL (the reply's second element, ms)."""
    READERS_INSIDE = 2
    """The owner also holds the other half of a read-write lock: nothing exported."""


class AdoptReply(IntEnum):
    """The first element of `ADOPT`'s reply."""

    FIELD_GONE = -1
    """The ticket was there but the field is gone (released or expired); the ticket
    is dropped."""
    NO_TICKET = 0
    """No ticket: adopted already, or expired with the hold."""
    ADOPTED = 1
    """Adopted: the reply goes on with the hold count and the key's TTL (ms)."""


EXPORT = Script(
    "handoff_export",
    # KEYS[1] lock, KEYS[2] adoption ticket
    # ARGV[1] the exported owner's field, ARGV[2] a field whose presence refuses the
    # export ("" none: the read field of a write hold's owner, or the other way round)
    # Reply: {ExportReply, ttl ms (0 unless exported)}
    f"""
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
    return {{{ExportReply.NOT_HELD:d}, 0}}
end
if ARGV[2] ~= '' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    return {{{ExportReply.READERS_INSIDE:d}, 0}}
end
local ttl = redis.call('pttl', KEYS[1])
if ttl <= 0 then
    return {{{ExportReply.NOT_HELD:d}, 0}}
end
redis.call('set', KEYS[2], ARGV[1], 'px', ttl)
return {{{ExportReply.EXPORTED:d}, ttl}}
""",
)

ADOPT = Script(
    "handoff_adopt",
    # KEYS[1] lock, KEYS[2] adoption ticket
    # ARGV[1] the exported owner's field
    # Takes the ticket (deletes it) if it names ARGV[1] and the field is still in the
    # hash. Reply: {AdoptReply, count, pttl} (0, 0 unless adopted)
    f"""
if redis.call('get', KEYS[2]) ~= ARGV[1] then
    return {{{AdoptReply.NO_TICKET:d}, 0, 0}}
end
redis.call('del', KEYS[2])
local count = redis.call('hget', KEYS[1], ARGV[1])
if not count then
    return {{{AdoptReply.FIELD_GONE:d}, 0, 0}}
end
return {{{AdoptReply.ADOPTED:d}, tonumber(count), redis.call('pttl', KEYS[1])}}
""",
)
