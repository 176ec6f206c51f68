"""``lock list``'s mapping of keys back to objects, without Redis: every auxiliary key
the library names leads back to its object's name, on either topology, and
bookkeeping keys lead nowhere (integration/harness/test_lock_cli.py lists real ones)."""

from __future__ import annotations

import pytest

from redisson_py.cli import build_parser
from redisson_py.cli.lock_data import KeyNames
from redisson_py.cli.lock_list import ListResult, format_list, object_name
from redisson_py.core import keyspace

NAMES = ["orders", "a{tag}b", "a}b", "x{", "foo{}{bar}", "{t}:plain", "job[1]}x"]
AUXILIARY = ("fair_queue", "fair_timeouts", "fair_alive", "fenced_token", "permits", "fence_record")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("by_slot", [False, True])
def test_every_key_of_an_object_leads_back_to_its_name(name: str, by_slot: bool) -> None:
    keys = KeyNames.of(name, by_slot=by_slot)
    assert object_name(name, by_slot=by_slot) == name
    for attribute in AUXILIARY:
        assert object_name(getattr(keys, attribute), by_slot=by_slot) == name, attribute


@pytest.mark.parametrize("by_slot", [False, True])
def test_bookkeeping_keys_are_no_objects(by_slot: bool) -> None:
    latch = keyspace.unlock_latch("orders", "r" + "0" * 32, by_slot=by_slot)
    assert object_name(latch, by_slot=by_slot) is None
    request = keyspace.request_latch("pool", f"r{'1' * 32}", by_slot=by_slot)
    assert object_name(request, by_slot=by_slot) is None
    read_hold = "{catalog}:0b9f3b4e-9d53-4f4e-a8f6-1c2d3e4f5a6b:1:rwlock_timeout:1"
    assert object_name(read_hold, by_slot=by_slot) is None
    rw_latches = keyspace.acquire_latches("catalog", by_slot=by_slot)
    assert object_name(rw_latches, by_slot=by_slot) is None


def test_the_table_has_a_row_per_object_and_says_what_it_cannot_tell() -> None:
    owner = "0b9f3b4e-9d53-4f4e-a8f6-1c2d3e4f5a6b:1"
    result = ListResult()
    result.entries = [
        {
            "name": "orders",
            "kind": "reentrant",
            "kinds": ["reentrant", "spin", "fair"],
            "holders": [{"field": owner, "count": 2, "mode": None}],
            "ttl_ms": 29_500,
            "waiters": 0,
            "value": None,
            "fence": None,
            "node": "redis://127.0.0.1:6379",
        }
    ]
    result.masters, result.keys, result.seconds = ["redis://127.0.0.1:6379"], 12, 0.01
    header, row, summary = format_list(result).splitlines()
    assert header.split() == ["NAME", "KIND", "HOLDERS", "TTL", "WAITERS", "NODE"]
    assert row.startswith("orders  cannot tell: reentrant, spin or fair lock  ")
    assert f"{owner}x2" in row and "29.5s" in row
    assert summary == "1 object(s); 12 key(s) scanned on 1 master(s) in 0.01 s"
    result.entries = []
    assert format_list(result).splitlines()[0] == "no locks found"


def test_list_arguments() -> None:
    parser = build_parser()
    args = parser.parse_args(["lock", "list", "orders:*", "--json", "--config", "x.yaml"])
    assert (args.pattern, args.json, args.config) == ("orders:*", True, "x.yaml")
    assert parser.parse_args(["lock", "list"]).pattern is None


@pytest.mark.parametrize("by_slot", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_a_queued_locks_waiter_keys_lead_back_to_its_name(name: str, by_slot: bool) -> None:
    for waiters in (keyspace.queued_queue, keyspace.queued_alive, keyspace.queued_entries):
        key = waiters(name, by_slot=by_slot)
        assert object_name(key, by_slot=by_slot) == name, key
