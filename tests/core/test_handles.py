"""What a lock handle hands its flows: the ref for one owner, made again when it must be."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from redisson_py.core.handles import GroupHandle, LockHandle
from redisson_py.core.state.client_state import ClientState, LockSettings
from redisson_py.core.state.holds import LockLost
from redisson_py.errors import ClientClosedError
from redisson_py.sync._primitives import RUNTIME


def _client() -> Any:
    manager = SimpleNamespace(routes_by_slot=False, publish_command="publish")
    return SimpleNamespace(_manager=manager, _state=ClientState(LockSettings(), runtime=RUNTIME))


def test_a_ref_is_kept_for_its_owner_and_made_again_when_anything_it_holds_changes() -> None:
    client = _client()
    handle = LockHandle(client, "lock")
    first = handle._ref(1)
    assert handle._ref(1) is first  # a lock()/unlock() loop reuses it
    other = handle._ref(2)
    assert other.owner.endswith(":2") and other is not first

    def callback(lost: LockLost) -> None:
        return None

    handle.on_lock_lost = callback
    with_callback = handle._ref(2)
    assert with_callback is not other and with_callback.on_lost_callback is callback
    # A forked child's client id is new: so is every owner field it writes.
    client._state.client_id = "child"
    assert handle._ref(2).owner == "child:2"


def test_group_members_get_refs_of_their_own_and_closed_clients_none() -> None:
    client = _client()
    handle = LockHandle(client, "lock")
    plain = handle._ref(1)

    def member_lost(*args: object) -> None:
        return None

    member = handle._ref(1, member_lost)
    assert member.group_on_lost is member_lost and member is not plain
    assert handle._ref(1) is plain  # a member's ref never stands in for the plain one
    client._state.closed = True
    with pytest.raises(ClientClosedError):
        handle._ref(1)


def test_a_group_keeps_its_members_refs_for_one_owner_until_a_member_changes() -> None:
    clients = [_client(), _client()]
    group = GroupHandle(*(LockHandle(client, f"member{i}") for i, client in enumerate(clients)))
    first = group._refs(1)
    assert [ref.owner for ref in first] == [f"{c._state.client_id}:1" for c in clients]
    assert all(ref.group_on_lost is not None for ref in first)
    again = group._refs(1)
    assert again == first and again is not first  # the same refs, in a list of its own
    assert group._refs(2)[0].owner.endswith(":2")

    def callback(lost: LockLost) -> None:
        return None

    group.locks[1].on_lock_lost = callback
    assert group._refs(2)[1].on_lost_callback is callback
    clients[1]._state.closed = True
    with pytest.raises(ClientClosedError):
        group._refs(2)
