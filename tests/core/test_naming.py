"""Key naming and hash slots: the rules every manager routes by."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from redisson_py.core.naming import (
    SLOT_COUNT,
    channel_name,
    hashtag,
    key_slot,
    owner_field,
    prefixed_name,
    slot_tag,
    unlock_latch_name,
)


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
