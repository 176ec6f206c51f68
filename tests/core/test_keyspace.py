"""The keyspace module names every key, field and channel, and is the only place that
spells them: Redisson's names are exactly Redisson's (a Java client shares the data),
and no other module of the package writes a prefix of its own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from redisson_py.core import keyspace
from redisson_py.core.routing.naming import key_slot

PACKAGE = Path(keyspace.__file__).resolve().parents[1]


@pytest.mark.parametrize("by_slot", [False, True])
def test_redissons_names_of_an_ordinary_lock(by_slot: bool) -> None:
    name = "orders:42"
    assert keyspace.lock_channel(name, by_slot=by_slot) == "redisson_lock__channel:{orders:42}"
    assert keyspace.fair_queue(name, by_slot=by_slot) == "redisson_lock_queue:{orders:42}"
    assert keyspace.fair_timeouts(name, by_slot=by_slot) == "redisson_lock_timeout:{orders:42}"
    assert keyspace.fenced_token(name, by_slot=by_slot) == "redisson_lock_token:{orders:42}"
    assert keyspace.read_write_channel(name, by_slot=by_slot) == "redisson_rwlock:{orders:42}"
    assert keyspace.semaphore_channel(name, by_slot=by_slot) == "redisson_sc:{orders:42}"
    assert keyspace.permit_timeouts(name, by_slot=by_slot) == "{orders:42}:timeout"
    assert (
        keyspace.latch_channel(name, by_slot=by_slot)
        == "redisson_countdownlatch__channel__{orders:42}"
    )
    assert (
        keyspace.unlock_latch(name, "r1", by_slot=by_slot) == "redisson_unlock_latch:{orders:42}:r1"
    )
    assert (
        keyspace.read_hold_timeout_prefix(name, "c:1", by_slot=by_slot)
        == "{orders:42}:c:1:rwlock_timeout"
    )


def test_redissons_fields_and_messages() -> None:
    owner = keyspace.owner_field("6f0e2a9c-0000-4000-8000-000000000000", 7)
    assert owner == "6f0e2a9c-0000-4000-8000-000000000000:7"
    assert keyspace.write_field(owner) == owner + ":write"
    assert keyspace.fair_waiter_channel("redisson_lock__channel:{a}", owner) == (
        f"redisson_lock__channel:{{a}}:{owner}"
    )
    assert (keyspace.UNLOCK_MESSAGE, keyspace.READ_UNLOCK_MESSAGE) == ("0", "0")
    assert keyspace.WRITE_UNLOCK_MESSAGE == "1"
    assert (keyspace.LATCH_ZERO_MESSAGE, keyspace.LATCH_NEW_COUNT_MESSAGE) == ("0", "1")
    assert keyspace.MODE_FIELD == "mode"
    assert keyspace.PERMIT_NO_LEASE == 922337203685477


@pytest.mark.parametrize("by_slot", [False, True])
def test_redisson_py_names_are_marked_as_its_own(by_slot: bool) -> None:
    name = "a"
    own = [
        keyspace.acquire_field("c:1"),
        keyspace.acquire_latches(name, by_slot=by_slot),
        keyspace.fair_alive(name, by_slot=by_slot),
        keyspace.request_latch(name, "r1", by_slot=by_slot),
        keyspace.fence_record(name, by_slot=by_slot),
        keyspace.fence_latch(name, "r1", by_slot=by_slot),
        keyspace.handoff_ticket(name, "t", by_slot=by_slot),
        keyspace.queued_channel(name, by_slot=by_slot),
        keyspace.queued_queue(name, by_slot=by_slot),
        keyspace.queued_alive(name, by_slot=by_slot),
        keyspace.queued_entries(name, by_slot=by_slot),
    ]
    assert all(key.startswith("redisson_py_") for key in own), own
    assert keyspace.acquire_field("c:1") == "redisson_py_acquire:c:1"
    assert keyspace.handoff_ticket(name, "t", by_slot=by_slot) == "redisson_py_handoff:{a}:t"
    assert keyspace.request_id(0xAB) == "r" + "0" * 30 + "ab"


@pytest.mark.parametrize("name", ["plain", "a{tag}b", "a}b", "a{", "{}x", "x{b}c"])
def test_in_a_cluster_every_name_of_an_object_shares_its_slot(name: str) -> None:
    slot = key_slot(name)
    names = [
        keyspace.lock_channel(name, by_slot=True),
        keyspace.unlock_latch(name, "r1", by_slot=True),
        keyspace.fair_queue(name, by_slot=True),
        keyspace.fair_timeouts(name, by_slot=True),
        keyspace.fair_alive(name, by_slot=True),
        keyspace.fenced_token(name, by_slot=True),
        keyspace.read_write_channel(name, by_slot=True),
        keyspace.read_hold_timeout_prefix(name, "c:1", by_slot=True) + ":1",
        keyspace.acquire_latches(name, by_slot=True),
        keyspace.semaphore_channel(name, by_slot=True),
        keyspace.permit_timeouts(name, by_slot=True),
        keyspace.latch_channel(name, by_slot=True),
        keyspace.request_latch(name, "r1", by_slot=True),
        keyspace.fence_record(name, by_slot=True),
        keyspace.fence_latch(name, "r1", by_slot=True),
        keyspace.handoff_ticket(name, "t", by_slot=True),
        keyspace.queued_channel(name, by_slot=True),
        keyspace.queued_queue(name, by_slot=True),
        keyspace.queued_alive(name, by_slot=True),
        keyspace.queued_entries(name, by_slot=True),
    ]
    assert [key_slot(key) for key in names] == [slot] * len(names), names


SPELLED = re.compile(
    r"redisson_(?:lock_|unlock_|rwlock|sc\b|countdownlatch)"
    r"|redisson_py_(?:acquire|fair|request|fence|handoff|queued)|rwlock_timeout"
)
"""A key, field or channel prefix spelled out, Redisson's or one of redisson-py's (its
module paths, context variables and attribute names do not match)."""


def _spelled_prefixes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }
    return [
        f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {SPELLED.search(node.value)[0]}"  # type: ignore[index]
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and SPELLED.search(node.value)
    ]


def test_no_module_but_the_keyspace_spells_a_prefix() -> None:
    found = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.name != "keyspace.py"
        for hit in _spelled_prefixes(path)
    ]
    assert found == [], "name it in redisson_py/core/keyspace.py and import it from there"


def _core_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("redisson_py"):
            found.add(str(node.module))
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("redisson_py")}
    return found


def test_the_keyspace_reads_only_the_slot_rules() -> None:
    """The scripts import the keyspace, so it stays below them: it reads only
    `naming` (the hashtag and slot rules), which reads nothing of the package."""
    assert _core_imports(PACKAGE / "core" / "keyspace.py") == {"redisson_py.core.routing.naming"}
    assert _core_imports(PACKAGE / "core" / "routing" / "naming.py") == set()
