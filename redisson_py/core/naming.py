"""Key naming and hash slots: which keys belong to a lock and where they live.

A lock named ``name`` owns the key ``name`` itself and auxiliary keys and channels built
from a prefix. Redis Cluster routes each key by the CRC16 hash slot of its hashtag (the
text between the first ``{`` and the first ``}`` after it, when non-empty) or of the whole
key, so every auxiliary name must hash to the lock's own slot: Lua scripts declare them
all in ``KEYS`` and the unlock channel must be served by the lock's node.

Redisson's rule (kept here so the data and channels stay recognisable): the auxiliary
name is ``prefix:{name}``, or ``prefix:name`` when the name already carries a hashtag.
Redisson applies the second form to any name holding ``{`` and the first to any other,
which puts the channel in a different slot for names such as ``a{`` or ``a}b``; those
names get a form that provably shares the slot (see :func:`prefixed_name`).
"""

from __future__ import annotations

import functools
import itertools
import string

from redis.crc import key_slot as _crc_key_slot

SLOT_COUNT = 16384
"""Number of hash slots in a Redis Cluster."""

LOCK_CHANNEL_PREFIX = "redisson_lock__channel"
UNLOCK_LATCH_PREFIX = "redisson_unlock_latch"
UNLOCK_MESSAGE = "0"
"""What an unlock publishes on the lock's channel (Redisson's ``LockPubSub.UNLOCK_MESSAGE``)."""


def key_slot(key: str | bytes) -> int:
    """Return the cluster hash slot (0..16383) of ``key``, honouring the hashtag rule."""
    data = key.encode("utf-8") if isinstance(key, str) else key
    return int(_crc_key_slot(data))


def hashtag(key: str) -> str | None:
    """Return the hashtag Redis would hash for ``key``, or None when it hashes the whole key."""
    start = key.find("{")
    if start < 0:
        return None
    end = key.find("}", start + 1)
    if end <= start + 1:  # no closing brace, or an empty tag: the whole key is hashed
        return None
    return key[start + 1 : end]


@functools.lru_cache(maxsize=1024)
def slot_tag(slot: int) -> str:
    """Return a short brace-free string whose hash slot is ``slot``.

    Used only for lock names that contain ``}`` without carrying a valid hashtag: no
    wrapping of such a name in braces can reproduce its slot, so its auxiliary names
    carry this tag instead. Deterministic, so every client derives the same names.
    """
    if not 0 <= slot < SLOT_COUNT:
        raise ValueError(f"hash slot {slot} is outside 0..{SLOT_COUNT - 1}")
    alphabet = string.ascii_letters + string.digits
    for length in itertools.count(1):
        for chars in itertools.product(alphabet, repeat=length):
            candidate = "".join(chars)
            if key_slot(candidate) == slot:
                return candidate
    raise AssertionError("unreachable: the search is exhaustive")  # pragma: no cover


def prefixed_name(prefix: str, name: str) -> str:
    """Return the auxiliary name ``prefix`` of lock ``name``, in the lock's hash slot.

    - ``name`` carries a hashtag (``a{tag}b``): ``prefix:name``; the tag is shared.
    - ``name`` has no ``}``: ``prefix:{name}``; the tag is the whole name.
    - otherwise (``a}b``, ``foo{}{bar}``): ``prefix:{<tag>}:name`` where ``<tag>`` is the
      shortest alphanumeric string in the name's slot. Redisson's names for these
      lie in another slot and fail with CROSSSLOT in a cluster.
    """
    if hashtag(name) is not None:
        return f"{prefix}:{name}"
    if "}" not in name:
        return f"{prefix}:{{{name}}}"
    return f"{prefix}:{{{slot_tag(key_slot(name))}}}:{name}"


def channel_name(name: str) -> str:
    """Return the pub/sub channel on which the lock ``name`` announces its release."""
    return prefixed_name(LOCK_CHANNEL_PREFIX, name)


def unlock_latch_name(name: str, request_id: str) -> str:
    """Return the key that remembers the outcome of release request ``request_id``.

    A release retried after a lost reply finds its first outcome here instead of
    releasing a second hold (Redisson's ``redisson_unlock_latch``, since 3.24.1).
    """
    return f"{prefixed_name(UNLOCK_LATCH_PREFIX, name)}:{request_id}"


def owner_field(client_id: str, owner_id: str | int) -> str:
    """Return the hash field naming one owner: ``<client uuid>:<thread or task id>``."""
    return f"{client_id}:{owner_id}"
