"""Key naming and hash slots: the rules every manager routes by."""

from __future__ import annotations

import itertools
import string
import time
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

import redisson_py
import redisson_py.asyncio
from redisson_py.core import keyspace
from redisson_py.core.keyspace import owner_field
from redisson_py.core.routing import naming
from redisson_py.core.routing.naming import SLOT_COUNT, hashtag, key_slot, prefixed_name, slot_tag


def channel_name(name: str, *, by_slot: bool = True) -> str:
    """A lock's channel, by default in a cluster's form (the rule under test)."""
    return keyspace.lock_channel(name, by_slot=by_slot)


def unlock_latch_name(name: str, request: str, *, by_slot: bool = True) -> str:
    return keyspace.unlock_latch(name, request, by_slot=by_slot)


def test_slot_of_the_reference_key() -> None:
    # The Redis Cluster specification's example: CRC16("123456789") = 0x31C3.
    assert key_slot("123456789") == 12739


def test_hashtags_share_a_slot() -> None:
    assert key_slot("{user1000}.following") == key_slot("{user1000}.followers")
    assert key_slot("{user1000}.following") == key_slot("user1000")


def test_empty_hashtag_hashes_the_whole_key() -> None:
    assert hashtag("foo{}{bar}") is None
    assert key_slot("foo{}{bar}") != key_slot("bar")


def test_first_closing_brace_ends_the_tag() -> None:
    assert hashtag("foo{{bar}}") == "{bar"
    assert key_slot("foo{{bar}}") == key_slot("{bar")


def test_channel_names_follow_redisson() -> None:
    assert channel_name("name") == "redisson_lock__channel:{name}"
    assert channel_name("a{tag}b") == "redisson_lock__channel:a{tag}b"


def test_names_redisson_would_misplace_get_a_slot_preserving_tag() -> None:
    for name in ("a}b", "foo{}{bar}", "}"):
        channel = channel_name(name)
        assert channel.endswith(":" + name)
        assert key_slot(channel) == key_slot(name)


def test_open_brace_without_tag_is_wrapped() -> None:
    assert channel_name("a{") == "redisson_lock__channel:{a{}"
    assert key_slot(channel_name("a{")) == key_slot("a{")


@given(st.text(min_size=1))
def test_every_auxiliary_name_shares_the_lock_slot(name: str) -> None:
    slot = key_slot(name)
    assert key_slot(channel_name(name)) == slot
    assert key_slot(unlock_latch_name(name, "0123abcd")) == slot
    if hashtag(name) is not None:
        assert channel_name(name) == "redisson_lock__channel:" + name
    elif "{" not in name and "}" not in name:
        assert channel_name(name) == "redisson_lock__channel:{" + name + "}"


@given(st.integers(min_value=0, max_value=SLOT_COUNT - 1))
def test_slot_tag_lands_in_its_slot(slot: int) -> None:
    tag = slot_tag(slot)
    assert "{" not in tag and "}" not in tag
    assert key_slot(tag) == slot


def test_slot_tag_rejects_slots_out_of_range() -> None:
    with pytest.raises(ValueError, match="16383"):
        slot_tag(SLOT_COUNT)


def test_owner_field_is_client_then_owner() -> None:
    assert owner_field("c0ffee", 7) == "c0ffee:7"
    assert prefixed_name("p", "x") == "p:{x}"


def _searched_tag(slot: int) -> str:
    """The tag the original per-slot search found: shortest, then product order."""
    alphabet = string.ascii_letters + string.digits
    for length in itertools.count(1):
        for chars in itertools.product(alphabet, repeat=length):
            if key_slot("".join(chars)) == slot:
                return "".join(chars)
    raise AssertionError  # pragma: no cover


@pytest.mark.parametrize("slot", [0, 1, 866, 5461, 12739, 16383])
def test_slot_tags_are_the_ones_every_client_derives(slot: int) -> None:
    # The table must give exactly the tags earlier clients derived, or two clients
    # would use different channels for the same lock.
    assert slot_tag(slot) == _searched_tag(slot)


def test_slot_tags_cost_is_bounded() -> None:
    # Every slot's tag, cold: one table of ~70 ms. The per-name search took up to 57 ms
    # for ONE name, so a sweep of all slots took minutes.
    naming._build_slot_tags.cache_clear()
    start = time.perf_counter()
    tags = [slot_tag(slot) for slot in range(SLOT_COUNT)]
    assert time.perf_counter() - start < 2.0
    assert all(1 <= len(tag) <= 3 for tag in tags)
    assert [key_slot(tag) for tag in tags] == list(range(SLOT_COUNT))


@pytest.mark.parametrize(
    ("name", "channel"),
    [
        ("name", "redisson_lock__channel:{name}"),
        ("a{tag}b", "redisson_lock__channel:a{tag}b"),
        ("a}b", "redisson_lock__channel:{a}b}"),
        ("foo{}{bar}", "redisson_lock__channel:foo{}{bar}"),
        ("a{", "redisson_lock__channel:a{"),
    ],
)
def test_without_slots_names_are_redissons_and_need_no_search(name: str, channel: str) -> None:
    # Single, master/slave and sentinel have no slots: Redisson's names, no tag search.
    naming._build_slot_tags.cache_clear()
    assert channel_name(name, by_slot=False) == channel
    assert (
        unlock_latch_name(name, "r1", by_slot=False)
        == channel.replace(keyspace.LOCK_CHANNEL_PREFIX, keyspace.UNLOCK_LATCH_PREFIX) + ":r1"
    )
    assert naming._build_slot_tags.cache_info().currsize == 0


def _client(*, by_slot: bool) -> object:
    """What a lock handle reads of its client when it is made (no I/O happens there)."""
    return SimpleNamespace(_manager=SimpleNamespace(routes_by_slot=by_slot))


@pytest.mark.parametrize("lock_class", [redisson_py.Lock, redisson_py.asyncio.Lock])
def test_lock_channel_follows_the_topology(lock_class: type[redisson_py.Lock]) -> None:
    naming._build_slot_tags.cache_clear()
    single = lock_class(_client(by_slot=False), "a}b")
    assert single._channel == "redisson_lock__channel:{a}b}"
    assert naming._build_slot_tags.cache_info().currsize == 0  # no search off-cluster
    cluster = lock_class(_client(by_slot=True), "a}b")
    assert key_slot(cluster._channel) == key_slot("a}b")


@pytest.mark.parametrize("lock_class", [redisson_py.Lock, redisson_py.asyncio.Lock])
@pytest.mark.parametrize("name", ["a\ud800", "\udfff", "x\ud83d"])
def test_lone_surrogate_names_are_refused_at_get_lock(
    lock_class: type[redisson_py.Lock], name: str
) -> None:
    with pytest.raises(redisson_py.InvalidLockNameError, match="surrogate") as caught:
        lock_class(_client(by_slot=False), name)
    assert isinstance(caught.value, redisson_py.RedissonError)
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize("name", ["", None, 5, b"bytes"])
def test_other_bad_names_raise_the_same_error(name: object) -> None:
    with pytest.raises(redisson_py.InvalidLockNameError, match="non-empty string"):
        redisson_py.Lock(_client(by_slot=False), name)  # type: ignore[arg-type]


def test_astral_characters_are_fine_names() -> None:
    lock = redisson_py.Lock(_client(by_slot=False), "lock-\U0001f512")
    assert lock.name == "lock-\U0001f512"
