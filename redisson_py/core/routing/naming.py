"""Hash slots and the hashtag rule: where a key lives, and the forms of an object's name
that keep all its keys in one slot (which names an object has: `redisson_py.core.keyspace`).

A lock named ``name`` owns the key ``name`` itself and auxiliary keys and channels built
from a prefix. Redis Cluster routes each key by the CRC16 hash slot of its hashtag (the
text between the first ``{`` and the first ``}`` after it, when non-empty) or of the whole
key, so every auxiliary name must hash to the lock's own slot: Lua scripts declare them
all in ``KEYS`` and the unlock channel must be served by the lock's node.

Redisson's rule (kept here so the data and channels stay recognisable): the auxiliary
name is ``prefix:{name}``, or ``prefix:name`` when the name already carries a hashtag.
Redisson applies the second form to any name holding ``{`` and the first to any other,
which puts the channel in a different slot for names such as ``a{`` or ``a}b``; those
names get, in cluster mode only, a form that provably shares the slot (see
`prefixed_name`); the other topologies have no slots and use Redisson's names.
"""

from __future__ import annotations

import functools
import string
from binascii import crc_hqx
from typing import Final

from redis.crc import key_slot as _crc_key_slot

SLOT_COUNT = 16384
"""Number of hash slots in a Redis Cluster."""


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


_TAG_ALPHABET: Final = (string.ascii_letters + string.digits).encode()
_TAG_WIDTH: Final = 3  # every slot has a tag of at most 3 characters (checked when built)


@functools.cache
def _build_slot_tags() -> bytes:
    """Every slot's tag, ``_TAG_WIDTH`` bytes each (NUL-padded), in one pass.

    Candidates are visited shortest first, then in ``itertools.product`` order over
    letters and digits, and each slot keeps the first that lands in it: the same tags a
    per-slot search finds, so all clients agree. CRC16 is extended one byte at a time;
    the whole table costs about 70 ms once and 48 KiB.
    """
    table = bytearray(SLOT_COUNT * _TAG_WIDTH)
    filled = [False] * SLOT_COUNT
    left = SLOT_COUNT
    frontier: list[tuple[bytes, int]] = [(b"", 0)]
    for _ in range(_TAG_WIDTH):
        extended: list[tuple[bytes, int]] = []
        for prefix, crc in frontier:
            for char in _TAG_ALPHABET:
                candidate = prefix + bytes((char,))
                value = crc_hqx(candidate[-1:], crc)
                extended.append((candidate, value))
                slot = value % SLOT_COUNT
                if not filled[slot]:
                    filled[slot] = True
                    table[slot * _TAG_WIDTH : slot * _TAG_WIDTH + len(candidate)] = candidate
                    left -= 1
                    if left == 0:
                        return bytes(table)
        frontier = extended
    raise AssertionError("some slot has no tag of 3 characters")  # pragma: no cover


def slot_tag(slot: int) -> str:
    """Return the shortest brace-free alphanumeric string whose hash slot is ``slot``.

    Used only in cluster mode, for lock names that contain ``}`` without carrying a
    valid hashtag: no wrapping of such a name in braces can reproduce its slot, so its
    auxiliary names carry this tag instead. Deterministic, so every client derives the
    same names. Bounded: the first call builds a table of all 16384 tags (~70 ms), every
    later call is a lookup.
    """
    if not 0 <= slot < SLOT_COUNT:
        raise ValueError(f"hash slot {slot} is outside 0..{SLOT_COUNT - 1}")
    start = slot * _TAG_WIDTH
    return _build_slot_tags()[start : start + _TAG_WIDTH].rstrip(b"\0").decode("ascii")


def key_prefix(name: str, *, by_slot: bool = True) -> str:
    """Return the hashtagged form of lock ``name`` that its auxiliary names start or end
    with: Redisson's ``name`` when it holds a ``{``, else ``{name}``.

    With ``by_slot`` (cluster: every auxiliary name must share the lock's hash slot):

    - ``name`` carries a hashtag (``a{tag}b``): ``name``; the tag is shared.
    - ``name`` has no ``}``: ``{name}``; the tag is the whole name.
    - otherwise (``a}b``, ``foo{}{bar}``): ``{<tag>}:name`` where ``<tag>`` is
      `slot_tag` of the name's slot. Redisson's forms of these lie in another
      slot and fail with CROSSSLOT in a cluster.
    """
    if not by_slot:
        return name if "{" in name else f"{{{name}}}"
    if hashtag(name) is not None:
        return name
    if "}" not in name:
        return f"{{{name}}}"
    return f"{{{slot_tag(key_slot(name))}}}:{name}"


def prefixed_name(prefix: str, name: str, *, by_slot: bool = True) -> str:
    """Return the auxiliary name ``prefix`` of lock ``name``: ``prefix:`` and
    `key_prefix` (Redisson's ``prefixName``: ``prefix:name`` when ``name`` holds
    a ``{``, else ``prefix:{name}``; in a cluster, the slot-safe form)."""
    return f"{prefix}:{key_prefix(name, by_slot=by_slot)}"


def suffixed_name(name: str, suffix: str, *, by_slot: bool = True) -> str:
    """Return the auxiliary name of lock ``name`` that ends in ``suffix``:
    `key_prefix` and ``:suffix`` (Redisson's ``suffixName``)."""
    return f"{key_prefix(name, by_slot=by_slot)}:{suffix}"
