"""``lock status``'s reading of data, without Redis: the key names it reads are the
library's own, and the kind each layout is told as (on snapshots written out here the
way the scripts leave them; integration/harness/test_lock_cli.py reads real ones)."""

from __future__ import annotations

import pytest

from redisson_py.cli import build_parser
from redisson_py.cli.lock_data import (
    KeyNames,
    Snapshot,
    classify,
    format_status,
    recognise,
    said,
)
from redisson_py.core import keyspace
from redisson_py.core.flows import count_down_latch, permit_semaphore, semaphore
from redisson_py.core.flows.lock_kinds import FAIR, FENCED, READ
from redisson_py.core.routing import naming

OWNER = "0b9f3b4e-9d53-4f4e-a8f6-1c2d3e4f5a6b:1"
PERMIT = b"\x01" * 16


@pytest.mark.parametrize("name", ["orders", "a{tag}b", "a}b", "x{"])
@pytest.mark.parametrize("by_slot", [False, True])
def test_key_names_are_the_librarys(name: str, by_slot: bool) -> None:
    keys = KeyNames.of(name, by_slot=by_slot)
    assert (keys.fair_queue, keys.fair_timeouts, keys.fair_alive) == FAIR.aux_keys(name, by_slot)
    assert (keys.fenced_token,) == FENCED.aux_keys(name, by_slot)
    assert (keys.permits,) == permit_semaphore.LAYOUT.aux(name, by_slot)
    assert keys.lock_channel == keyspace.lock_channel(name, by_slot=by_slot)
    assert keys.read_write_channel == naming.prefixed_name(
        READ.channel_prefix, name, by_slot=by_slot
    )
    assert keys.semaphore_channel == semaphore.LAYOUT.channel(name, by_slot)
    assert keys.latch_channel == count_down_latch.LAYOUT.channel(name, by_slot)
    if by_slot:  # every key in the name's slot
        slot = naming.key_slot(name)
        for key in (
            keys.fair_queue,
            keys.fair_alive,
            keys.fenced_token,
            keys.permits,
            keys.fence_record,
        ):
            assert naming.key_slot(key) == slot


@pytest.mark.parametrize(
    ("snapshot", "kind"),
    [
        (Snapshot(), "not locked"),
        (Snapshot("hash", fields={OWNER: "2"}), "reentrant"),
        (Snapshot("hash", fields={OWNER: "1"}, queue=[OWNER + "x"]), "fair"),
        (Snapshot(queue=[OWNER]), "fair"),
        (Snapshot("hash", fields={OWNER: "1"}, token="7"), "fenced"),
        (Snapshot(token="7"), "fenced"),
        (Snapshot("hash", fields={"mode": "write", OWNER + ":write": "1"}), "read-write"),
        (Snapshot("hash", fields={"mode": "read", OWNER: "3"}), "read-write"),
        (Snapshot("string", value="3"), "semaphore or count-down latch"),
        (
            Snapshot("string", value="0", permits=[(PERMIT, keyspace.PERMIT_NO_LEASE)]),
            "permit-expirable semaphore",
        ),
        (Snapshot(permits=[(PERMIT, 5)]), "permit-expirable semaphore"),
        (Snapshot("string", value="v", fence={"token": "3", "owner": OWNER}), "fenced resource"),
        (Snapshot(fence={"token": "3", "owner": OWNER}), "fenced resource"),
        (Snapshot("string", value="hello"), "other"),
        (Snapshot("string"), "other"),  # too long to be read: no counter
        (Snapshot("hash", fields={"field": "value"}), "other"),
        (Snapshot("hash", fields={"mode": "read"}), "other"),
        (Snapshot("list"), "other"),
    ],
)
def test_kinds_told_from_data(snapshot: Snapshot, kind: str) -> None:
    assert classify(snapshot) == kind


KEYS = KeyNames.of("res", by_slot=False)
NOBODY: dict[str, int] = {}
LOCK_WAITER = {KEYS.lock_channel: 1}
HELD_ONCE = {OWNER: "1"}
HELD_TWICE = {OWNER: "2"}
ALL_REENTRANT_LAYOUT = ("reentrant", "non-reentrant", "spin", "fair", "non-reentrant fair")


@pytest.mark.parametrize(
    ("snapshot", "subscribers", "kinds"),
    [
        # the reentrant lock's layout: spin, non-reentrant and idle fair locks share it
        (Snapshot("hash", fields=HELD_ONCE), NOBODY, ALL_REENTRANT_LAYOUT),
        (Snapshot("hash", fields=HELD_ONCE), None, ALL_REENTRANT_LAYOUT),
        (Snapshot("hash", fields=HELD_TWICE), NOBODY, ("reentrant", "spin", "fair")),
        (Snapshot("hash", fields=HELD_ONCE), LOCK_WAITER, ("reentrant", "non-reentrant")),
        (Snapshot("hash", fields=HELD_TWICE), LOCK_WAITER, ("reentrant",)),
        # a fair lock's queue
        (
            Snapshot("hash", fields=HELD_ONCE, queue=[OWNER + "x"]),
            None,
            ("fair", "non-reentrant fair"),
        ),
        (Snapshot("hash", fields=HELD_TWICE, queue=[OWNER + "x"]), None, ("fair",)),
        (Snapshot(queue=[OWNER]), NOBODY, ("fair", "non-reentrant fair")),
        # a plain integer: semaphore, latch, or a permit-expirable semaphore
        (
            Snapshot("string", value="3"),
            NOBODY,
            ("semaphore", "count-down latch", "permit-expirable semaphore"),
        ),
        (
            Snapshot("string", value="3"),
            None,
            ("semaphore", "count-down latch", "permit-expirable semaphore"),
        ),
        (Snapshot("string", value="-2"), NOBODY, ("semaphore", "permit-expirable semaphore")),
        (Snapshot("string", value="3"), {KEYS.latch_channel: 2}, ("count-down latch",)),
        (
            Snapshot("string", value="3"),
            {KEYS.semaphore_channel: 1},
            ("semaphore", "permit-expirable semaphore"),
        ),
        # layouts of their own
        (Snapshot("hash", fields=HELD_ONCE, token="7"), NOBODY, ("fenced",)),
        (Snapshot("hash", fields={"mode": "read", OWNER: "3"}), NOBODY, ("read-write",)),
        (
            Snapshot("string", value="0", permits=[(PERMIT, 5)]),
            NOBODY,
            ("permit-expirable semaphore",),
        ),
        (Snapshot(), NOBODY, ("not locked",)),
    ],
)
def test_recognise_keeps_every_kind_the_data_allows(
    snapshot: Snapshot, subscribers: dict[str, int] | None, kinds: tuple[str, ...]
) -> None:
    recognition = recognise(snapshot, KEYS, subscribers)
    assert recognition.candidates == kinds
    assert recognition.told == (len(kinds) == 1)
    if snapshot.key_type in ("hash", "string") and not recognition.told:
        assert recognition.evidence  # says why it cannot tell


def test_said_names_one_kind_or_says_it_cannot_tell() -> None:
    assert said("reentrant", ["reentrant"]) == "reentrant lock"
    assert said("reentrant", ["reentrant", "spin", "fair"]) == (
        "cannot tell: reentrant, spin or fair lock"
    )
    assert said("semaphore or count-down latch", ["count-down latch"]) == "count-down latch"


def test_text_of_an_entry_says_what_cannot_be_told() -> None:
    entry = {
        "name": "pool",
        "kind": "semaphore or count-down latch",
        "kinds": ["semaphore", "count-down latch", "permit-expirable semaphore"],
        "evidence": ["waiters unknown (classic pub/sub on a cluster)"],
        "type": "string",
        "node": None,
        "locked": None,
        "holders": [],
        "ttl_ms": None,
        "waiters": None,
        "mode": None,
        "queue": [],
        "token": None,
        "value": 3,
        "permits": None,
        "fence": None,
    }
    text = format_status(entry)
    assert text.startswith(
        "pool: cannot tell: semaphore, count-down latch or permit-expirable semaphore: 3"
    )
    assert "evidence: waiters unknown" in text and "waiters: unknown" in text


def test_status_and_unlock_arguments() -> None:
    parser = build_parser()
    args = parser.parse_args(["lock", "status", "a", "b{c}", "--json", "--config", "x.yaml"])
    assert (args.names, args.json, args.config) == (["a", "b{c}"], True, "x.yaml")
    args = parser.parse_args(["lock", "unlock", "--force", "-y", "name"])
    assert (args.name, args.force, args.yes, args.json) == ("name", True, True, False)
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["lock", "status"])  # at least one name
    assert exited.value.code == 2
