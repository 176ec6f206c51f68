"""Lua pieces that make the semaphores' and the latch's scripts count once per request,
and the scripts they share (`TRY_SET`, `DELETE`).

Redisson's semaphore and latch scripts are not idempotent: a release or a count-down
whose reply was lost and which is sent again would count twice. redisson-py gives each
logical call a request id (one per ``release()``, kept by all its retries; one per
``acquire()``, kept by all its attempts) and a latch key for it in the object's hash
slot, ``redisson_py_request:{name}:<request id>``, which lives for the client's latch
lifetime (longer than every retry of the call). Redisson's own scripts never read it.

- A mutation (release, add, count down...) is wrapped by `remembered`: its first
  run stores its integer reply in the latch; a retry gets that reply back and changes
  nothing.
- An acquire records ``granted`` in the latch when it takes permits
  (`GRANT_CHECK`); an attempt of the same acquire run later (a retry, or one the
  server runs late) finds it and takes nothing more. An undo (`UNDO_CHECK`)
  marks the latch ``undone``, whether or not the acquire ran yet, and gives the permits
  back only if it had: an attempt the server runs after the undo takes nothing.
"""

from __future__ import annotations

from redisson_py.core.effects import Script
from redisson_py.core.scripts import publish

"""The latch keys' prefix: ``redisson_py_request:{name}:<request id>``."""


def remembered(body: str) -> str:
    """Lua: ``body`` (returning an integer) applied once per request.

    Conventions of every script built with it: ``KEYS[#KEYS]`` is the request's latch,
    ``ARGV[1]`` the latch lifetime (ms). The reply is the first run's, for every run.
    """
    return f"""
local done = redis.call('get', KEYS[#KEYS])
if done ~= false then
    return tonumber(done)
end
local function apply()
{body}
end
local reply = apply()
redis.call('set', KEYS[#KEYS], reply, 'px', ARGV[1])
return reply
"""


GRANT_CHECK = """
local done = redis.call('get', KEYS[#KEYS])
if done == 'granted' then
    return {1, 0}
end
if done ~= false then
    return {2, 0}
end
"""
"""The start of an acquire script (``KEYS[#KEYS]`` its latch): ``{1, 0}`` when an earlier
attempt of this acquire took the permits (nothing changes), ``{2, 0}`` when the acquire
was undone (the caller starts a new one)."""

GRANTED = """
redis.call('set', KEYS[#KEYS], 'granted', 'px', ARGV[1])
return {1, 0}
"""
"""The end of an acquire script that took permits: record it in the latch."""

UNDO_CHECK = """
local done = redis.call('get', KEYS[#KEYS])
redis.call('set', KEYS[#KEYS], 'undone', 'px', ARGV[1])
if done ~= 'granted' then
    return 0
end
"""
"""The start of an undo script (``KEYS[#KEYS]`` the acquire's latch, ``ARGV[1]`` its
lifetime): the acquire is marked undone; unless it had taken permits, the script ends
with 0 (nothing to give back)."""

DELETE = Script(
    "delete_object",
    # KEYS[1 .. #KEYS - 2] the object's keys, KEYS[#KEYS - 1] its channel, KEYS[#KEYS]
    # this request's latch
    # ARGV[1] latch lifetime (ms), ARGV[2] publish command ("publish", "spublish" or
    # ""), ARGV[3] the message to publish when something was deleted ("": none)
    # Reply: 1 when any of the keys existed (now deleted), else 0; a retry gets the
    # first run's reply.
    remembered(
        f"""
local deleted = 0
for i = 1, #KEYS - 2 do
    deleted = deleted + redis.call('del', KEYS[i])
end
if deleted == 0 then
    return 0
end
if ARGV[3] ~= '' then
    {publish("KEYS[#KEYS - 1]", "ARGV[3]", "ARGV[2]")}
end
return 1
"""
    ),
)

TRY_SET = Script(
    "try_set",
    # KEYS[1] the count (a semaphore's permits, a latch's count), KEYS[2] its channel,
    # KEYS[3] this call's latch
    # ARGV[1] latch lifetime (ms), ARGV[2] publish command, ARGV[3] the count,
    # ARGV[4] the message that announces it ("": the count itself, as the semaphores')
    # Sets the count only when the key does not exist (Redisson's trySetPermits and
    # trySetCount). Reply: 1 when set, 0 when it existed.
    remembered(
        f"""
if redis.call('exists', KEYS[1]) == 1 then
    return 0
end
redis.call('set', KEYS[1], ARGV[3])
local message = ARGV[4]
if message == '' then
    message = ARGV[3]
end
{publish("KEYS[2]", "message", "ARGV[2]")}
return 1
"""
    ),
)
